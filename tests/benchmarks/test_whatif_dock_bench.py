"""The What if dock on the 10^6-event log (issue 28 item 5): resident memory through knob
edits against the loaded log's, and "Show prediction beside" against opening the log, both
measured in one fresh window process (``whatif_probe.py``) in the same run.

Figures only (rows of the ``make bench`` table), never timed assertions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from biglog import ROOT, big_log
from table import add_row

pytestmark = pytest.mark.bench
PROBE = Path(__file__).with_name("whatif_probe.py")


def _probe(path: Path) -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    out = subprocess.run(
        [sys.executable, str(PROBE), str(path)],
        check=True, cwd=ROOT, capture_output=True, text=True, env=env, timeout=1800,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_whatif_dock_memory_and_prediction_beside() -> None:
    got = _probe(big_log())
    loaded, answered, edits = got["loaded"], got["answered"], got["edits"]
    most = max(edits)
    steps = " ".join(f"{x:.0f}" for x in edits)
    add_row(
        f"What if dock: RSS {len(edits)} edits add",
        f"+{most - answered:.0f} MB (after each: {steps} MB)",
        f"the loaded log {loaded:.0f} MB; first answer {answered:.0f} MB",
        (most - answered) / loaded,
        0.2,  # issue 28 item 5: an edit adds at most a fifth of the loaded log's RSS
    )
    add_row(
        f"What if dock: RSS first answer + {len(edits)} edits add",
        f"+{most - loaded:.0f} MB (slowest edit {max(got['edit_s']):.1f} s)",
        f"the loaded log {loaded:.0f} MB",
        (most - loaded) / loaded,
        None,
    )
    add_row(
        "Show prediction beside: click to the predicted run drawn",
        f"{got['beside_drawn_s']:.2f} s (diff filled {got['beside_s']:.2f} s; "
        f"peak {got['beside_peak']:.0f} MB, after {got['beside']:.0f} MB)",
        f"the window opens the log {got['open_s']:.2f} s",
        got["beside_drawn_s"] / got["open_s"],
        1.0,  # issue 28 item 5: drawn within 3 s, where the log opened in ~2-3 s
    )
