"""The report path imports neither pandas nor Qt (issue 15): `python -m viewer report LOG
--json` in a fresh interpreter, then its ``sys.modules`` inspected."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs" / "two_gpus.log"

# ``viewer.cli.main`` is what ``python -m viewer`` runs, without ending the process when the
# command is done (``leave``), so that its modules can be looked at.
_PROBE = """
import contextlib, io, json, sys
from viewer.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    main(sys.argv[1:])
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"pandas", "PySide6", "pyqtgraph"})
print(json.dumps({"heavy": heavy, "out": out.getvalue()}))
"""


@pytest.mark.parametrize(
    "args",
    [
        ["report", "--json"],
        ["report"],
        ["report", "--markdown"],
        ["export", "-o", "-", "--format", "csv", "--table", "gaps"],
    ],
)
def test_the_report_path_imports_neither_pandas_nor_qt(args) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args, str(SAMPLE)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["heavy"] == []
    assert "GPU" in got["out"] or "gpu" in got["out"]  # it did report
