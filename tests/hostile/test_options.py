"""Hostile numbers for every bounded option, in one subprocess (60 s limit): NaN, inf,
1e300, negative seeds, 10^30 counts.  Each is refused before any work with a message
naming the option, no traceback, no file written (issue 13, items 10 and 11)."""

from __future__ import annotations

import os

import pytest

from tests.hostile.conftest import run_script
from tests.hostile.files import SAMPLE, snapshot

BIG = str(10**30)
#: (option named in the message, argv with {LOG} and {OUT} folders)
OPTIONS = [
    ("--height", ["export", "{LOG}", "--out", "{OUT}/x.png", "--height", "1000000000"]),
    ("--width", ["export", "{LOG}", "--out", "{OUT}/x.png", "--width", "nan"]),
    ("--scale", ["export", "{LOG}", "--out", "{OUT}/x.png", "--scale", "inf"]),
    ("--range", ["export", "{LOG}", "--out", "{OUT}/x.json", "--range", "nan:5"]),
    ("--range", ["export", "{LOG}", "--out", "{OUT}/x.md", "--range", "0:1e300"]),
    ("--session", ["export", "{LOG}", "--out", "{OUT}/x.csv", "--table", "gaps", "--session", BIG]),
    ("--workers-per-gpu", ["export", "{LOG}", "--out", "{OUT}/x.json", "--workers-per-gpu", BIG]),
    ("--range", ["report", "{LOG}", "--range", "-inf:0"]),
    ("--session", ["report", "{LOG}", "--session", "nan"]),
    ("--workers-per-gpu", ["info", "{LOG}", "--workers-per-gpu", "0"]),
    ("--range", ["compare", "{LOG}", "{LOG}", "--range", "0:inf"]),
    ("--workers-per-gpu", ["open", "{LOG}", "--workers-per-gpu", "nan"]),
    ("--noise", ["simulate", "-o", "{OUT}/s.log", "--noise", "0.999999"]),
    ("--seed", ["simulate", "-o", "{OUT}/s.log", "--seed", "-1"]),
    ("--sectors", ["simulate", "-o", "{OUT}/s.log", "--sectors", "nan"]),
    ("--synth-ms", ["simulate", "-o", "{OUT}/s.log", "--synth-ms", "1e300"]),
    ("--interval-ms", ["simulate", "-o", "{OUT}/s.log", "--interval-ms", "inf"]),
    ("--kinds", ["simulate", "-o", "{OUT}/s.log", "--kinds", "porep-c2=nan"]),
    ("--events", ["simulate", "-o", "{OUT}/s.log", "--events", BIG]),
    ("--queue-cap", ["simulate", "-o", "{OUT}/s.log", "--queue-cap", "-3"]),
    ("--budget-gib", ["simulate", "-o", "{OUT}/s.log", "--budget-gib", "nan"]),
]
IDS = [f"{argv[0]} {option} {argv[-1]}" for option, argv in OPTIONS]


@pytest.fixture(scope="module")
def option_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile-options")
    log = folder / "run.log"
    log.write_bytes(SAMPLE.read_bytes())
    (folder / "out").mkdir()
    fill = {"{LOG}": os.fspath(log), "{OUT}": os.fspath(folder / "out")}
    payload = []
    for name, (_, argv) in zip(IDS, OPTIONS, strict=True):
        args = []
        for a in argv:
            for key, value in fill.items():
                a = a.replace(key, value)
            args.append(a)
        payload.append({"name": name, "argv": args})
    before = snapshot(folder)
    run = run_script("drive.py", payload, 60.0, "name")
    return run, before, snapshot(folder)


@pytest.mark.parametrize(("option", "argv"), OPTIONS, ids=IDS)
def test_a_hostile_number_is_refused_by_name(option: str, argv: list, option_runs) -> None:
    run, before, after = option_runs
    assert run.hung_at is None, f"hung on {run.hung_at}"
    result = run.results[IDS[OPTIONS.index((option, argv))]]
    err = result["stderr"]
    assert result["traceback"] is None and "Traceback" not in err, result["traceback"] or err
    assert result["code"] == 2 and f"argument {option}" in err, err
    assert after == before
