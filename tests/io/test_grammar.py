"""One grammar (``viewer/io/grammar.py``): the compiled scanner is generated from it, the
Python parsers are built from it, and the scanner backend is chosen once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from viewer.io import exact, grammar, strict
from viewer.io.parse import TL_SKIP
from viewer.io.records import JobIds, RawBatch, find_records


def test_the_c_header_is_generated_from_the_table():
    """_cscan.c reads the grammar from _grammar.h only: it must be the table's."""
    assert grammar.HEADER.read_text() == grammar.c_header(), (
        'stale _grammar.h: run python -c "import viewer.io.grammar as g; g.write_header()"'
    )


def test_the_compiled_scanner_is_built_where_a_compiler_is():
    """`make setup` builds it; losing it silently would make big logs 10x slower."""
    try:
        from viewer.io import _cscan
    except ImportError:
        _cscan = None
    assert _cscan is not None or shutil.which("cc") is None


def line(event: bytes, detail: bytes) -> bytes:
    return b"TIMELINE,5," + event + b",job-1," + detail


@pytest.mark.parametrize(("name", "code"), grammar.EVENTS)
def test_every_event_of_the_table_is_read_by_both_parsers(name, code):
    """Strict (numpy) and exact (regex) parsers know exactly the table's events."""
    detail = b"worker=1,partition=2,gpu_ms=4"  # at most three fields in the strict form
    raw = RawBatch()
    data = line(name, detail) + b"\n" + line(b"GPU_NOPE", detail) + b"\n"
    find_records(data, 0, len(data), raw)
    f = strict.flatten(raw.items)
    fast = strict.parse_events(f, np.arange(2), TL_SKIP)
    assert fast.ok.tolist() == [True, False] and fast.event[0] == code
    slow = exact.parse_exact([it[TL_SKIP:] for it in raw.items], [0, 1], JobIds())
    assert slow.event.tolist() == [code] and slow.skipped_reason == ["unknown_event"]


def test_detail_keys_in_the_table_order_are_strict_and_any_other_order_exact():
    keys = [k for k in grammar.DETAIL_KEYS if k.kind == "id"] + [grammar.DETAIL_KEYS[3]]
    ordered = b",".join(k.name + b"=7" for k in keys)
    shuffled = b",".join(k.name + b"=7" for k in reversed(keys))
    items = [line(b"GPU_END", ordered), line(b"GPU_END", shuffled)]
    fast = strict.parse_events(strict.flatten(items), np.arange(2), TL_SKIP)
    assert fast.ok.tolist() == [True, False]
    slow = exact.parse_exact([it[TL_SKIP:] for it in items], [0, 1], JobIds())
    assert slow.worker.tolist() == slow.partition.tolist() == [7, 7]
    assert slow.gpu_ms.tolist() == [7.0, 7.0]


@pytest.mark.parametrize("pure", ["", "1"])
def test_the_backend_is_chosen_once_at_import(pure):
    """``CUZK_PURE_PYTHON=1`` chooses the pure-Python scanner when viewer.io is imported;
    every scan goes through ``scanner.BACKEND`` (no scanner reads the variable later)."""
    code = (
        "import os; from viewer.io import scanner; print(scanner.BACKEND.NAME); "
        "os.environ.pop('CUZK_PURE_PYTHON', None); print(scanner.BACKEND.NAME)"
    )
    env = {**os.environ, "CUZK_PURE_PYTHON": pure}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    built = shutil.which("cc") is not None
    want = "python" if pure or not built else "compiled"
    assert out == [want, want]


def test_every_skip_reason_is_in_the_table():
    """The reasons a reader gives for what it skipped are the grammar's (``Session.skipped``
    keys), over every sample and regression log."""
    from pathlib import Path

    from viewer.io import LogError, open_log

    root = Path(__file__).resolve().parents[2]
    seen: set[str] = set()
    for path in [*root.glob("sample_logs/*.log"), *Path(__file__).parent.glob("data/*")]:
        try:
            seen |= {r for s in open_log(path).sessions for r in s.skipped}
        except LogError:
            continue
    assert seen and seen <= set(grammar.SKIP_REASONS)
