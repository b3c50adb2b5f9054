"""Every command on every hostile input, in subprocesses: a clear message naming the file
and the problem, exact counts of what was skipped, no traceback, no hang over the case's
limit, and no input or unrelated file modified (issue 13)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.hostile.conftest import InputRun
from tests.hostile.corpus import COMMANDS, INPUTS, Case
from viewer.export.format import CSV_FORMULA_START, display_path

#: The output each export command writes when it succeeds.
OUTPUTS = {"t.json", "r.md", "g.csv", "j.md", "v.png", "v.svg"}


def _params(cases: tuple[Case, ...]) -> list:
    params = []
    for case in cases:
        marks = []
        if case.xfail:
            marks.append(pytest.mark.xfail(reason=case.xfail, strict=False))
        if case.slow:
            marks.append(pytest.mark.hostile_slow)
        params.append(pytest.param(case, id=case.name, marks=marks))
    return params


def _problems(case: Case, r: InputRun) -> list[str]:
    """Everything wrong with one case's run, in words."""
    run, name = r.run, display_path(r.built.path.name)
    problems = []
    if run.hung_at is not None:
        problems.append(f"still running '{run.hung_at}' after the {case.limit_s:.0f} s limit")
    if r.after != r.before:
        changed = sorted(set(r.before.items()) ^ set(r.after.items()))
        problems.append(f"the input folder changed: {changed}")
    for command, result in run.results.items():
        code, err = result["code"], result["stderr"]
        where = f"{command}: "
        if result["traceback"] or "Traceback" in err:
            problems.append(where + "traceback\n" + (result["traceback"] or err))
            continue
        allowed = {"ok": (0,), "refused": (2,), "any": (0, 2)}[case.expect]
        if code not in allowed:
            problems.append(where + f"exit status {code}, expected {allowed}: {err.strip()}")
        if code == 2:
            if name not in err:
                problems.append(where + f"the message does not name {name}: {err.strip()}")
            missing = [s for s in case.says if s.lower() not in err.lower()]
            if missing:
                problems.append(where + f"the message does not say {missing}: {err.strip()}")
    outputs = {p.name for p in r.built.out.iterdir()}
    wrote = {
        COMMANDS[c][COMMANDS[c].index("--out") + 1].rsplit("/", 1)[-1]
        for c, res in run.results.items()
        if "--out" in COMMANDS[c] and res["code"] == 0
    }
    if outputs != wrote:
        problems.append(f"outputs {sorted(outputs)}, expected {sorted(wrote)}")
    return problems


@pytest.mark.parametrize("case", _params(INPUTS))
def test_every_command_on_a_hostile_input(case: Case, input_runs: dict[str, InputRun]) -> None:
    r = input_runs[case.name]
    problems = _problems(case, r)
    assert not problems, f"{case.name}:\n" + "\n".join(problems)
    info = r.run.results["info --json"]
    if info["code"] == 0 and (case.events is not None or case.skipped is not None):
        sessions = json.loads(info["stdout"])["sessions"]
        if case.events is not None:
            assert sum(s["events"] for s in sessions) == case.events
        if case.skipped is not None:
            skipped: dict[str, int] = {}
            for s in sessions:
                for reason, n in s["skipped"].items():
                    skipped[reason] = skipped.get(reason, 0) + n
            assert skipped == case.skipped
    if case.sidecar:  # the image export reads the sidecar, says why it is not used
        assert "annotations" in r.run.results["export png"]["stderr"]


HOSTILE_IDS_CASE = [pytest.param(c, id=c.name) for c in INPUTS if c.name == "hostile job ids"]


@pytest.mark.parametrize("case", HOSTILE_IDS_CASE)
def test_job_ids_never_become_html_or_formulas(case: Case, input_runs: dict[str, InputRun]) -> None:
    out = input_runs[case.name].built.out
    assert "<script" not in (out / "r.md").read_text(encoding="utf-8")
    jobs = (out / "j.md").read_text(encoding="utf-8")
    assert "<script" not in jobs and "&lt;script&gt;" in jobs
    text = (out / "g.csv").read_text(encoding="utf-8")
    cells = [c for row in csv.reader(io.StringIO(text, newline="")) for c in row]
    assert "'=1+2" in cells or "'@cmd" in cells
    assert not [c for c in cells if c.startswith(CSV_FORMULA_START) and not _number(c)]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


TRAILING_CASE = [pytest.param(c, id=c.name) for c in INPUTS if c.name == "gz with trailing garbage"]


@pytest.mark.parametrize("case", TRAILING_CASE)
def test_trailing_bytes_after_a_gzip_stream_are_a_note(case: Case, input_runs) -> None:
    """The stream is read whole and the bytes after it are named, not called damage."""
    note = "19 trailing bytes after the gzip stream ignored"
    for command in ("report", "report --markdown", "info"):
        out = input_runs[case.name].run.results[command]["stdout"]
        assert note in out and "damaged" not in out, out
