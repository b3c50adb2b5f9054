"""A what-if to a GPU-worker count no log of the load ran says that its CPU cost is unseen
(issue 25: on the real H200 runs gw 1 ran prep in 110 ms against 160 ms at gw 2, which no
log at gw 2 can show)."""

from __future__ import annotations

from pathlib import Path

from viewer.analysis.load import fit, sample
from viewer.io import open_log
from viewer.whatif import Knobs, what_if

SAMPLES = Path(__file__).parents[2] / "sample_logs"


def _session(name: str):
    return open_log(SAMPLES / name).sessions[0]


def _note(w) -> str:
    return next((n for n in w.notes if "GPU worker" in n and "--calibrate" in n), "")


def test_a_worker_count_no_log_ran_is_named_as_unseen() -> None:
    phase8 = _session("phase8_pw10_5sectors.log")  # gw 2
    note = _note(what_if(phase8, Knobs(gw=3)))
    assert note.startswith("gw 2 -> 3: the logs the load is learned from all ran 2 GPU workers")
    assert not _note(what_if(phase8, Knobs(gw=2)))  # the count it ran: nothing unseen
    assert not _note(what_if(phase8, Knobs(pw=12)))
    # Calibrated with a run at gw 1 as well, gw 1 is seen.
    phase7 = _session("phase7_gw1.log")
    load = fit([sample(phase8, "phase8"), sample(phase7, "phase7")])
    assert load.gws == (1, 2)
    assert not _note(what_if(phase8, Knobs(gw=1), load=load))
    assert _note(what_if(phase8, Knobs(gw=4), load=load)).startswith("gw 2 -> 4: the logs the load")
