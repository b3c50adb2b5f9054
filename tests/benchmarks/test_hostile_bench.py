"""Hostile inputs (issue 13, item 12): peak memory as a share of the file, and time.

The shapes are written once into ``bench_data/`` (see ``biglog.hostile_logs``); each is
loaded by ``open_log`` in a fresh process, with the compiled scanner and with the pure-
Python one.  Not timed assertions: the figures go to the table ``make bench`` prints.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from biglog import ROOT, hostile_logs
from table import add_row
from test_load_bench import PROBE

pytestmark = pytest.mark.bench
SHAPES = hostile_logs()


def _load(path, pure: bool) -> dict:
    env = {"CUZK_PURE_PYTHON": "1"} if pure else {}
    out = subprocess.run(
        [sys.executable, str(PROBE), "load", str(path)],
        cwd=ROOT, capture_output=True, text=True, env={**_env(), **env}, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "CUZK_PURE_PYTHON"}


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "python"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_hostile_peak_memory(shape, pure):
    path = SHAPES[shape]
    base = json.loads(
        subprocess.run(
            [sys.executable, str(PROBE), "baseline"], cwd=ROOT, capture_output=True, text=True
        ).stdout
    )
    got = _load(path, pure)
    size = path.stat().st_size
    peak = got["maxrss"] - base["maxrss"]
    scanner = "pure Python" if pure else "compiled"
    add_row(
        f"hostile: {shape} ({scanner}), peak memory",
        f"{peak / 1e6:.0f} MB in {got['seconds']:.1f} s",
        f"file size {size / 1e9:.2f} GB",
        peak / size,
        0.5,
    )
