"""A what-if as a terminal table, Markdown or JSON (``cuzk-timeline-whatif/1``).

Three columns: the run as measured, its replay unchanged (how far the replay is
from the log) and the replay with the knobs (the prediction).
"""

from __future__ import annotations

from pathlib import Path

from viewer.analysis.floors import FLOORS, LABEL, Floors
from viewer.analysis.units import percent
from viewer.export.format import (
    FRACTION_DIGITS,
    S_DIGITS,
    Row,
    display_path,
    markdown_table,
    markdown_text,
    num,
    pct,
    sec,
    text_table,
)
from viewer.export.report import floors_dict
from viewer.model import Session
from viewer.whatif import FORMAT, Outcome, WhatIf, sentence

HEAD = ("figure", "measured", "replayed", "predicted")


def outcome_dict(o: Outcome) -> dict:
    """``s_per_proof``, ``gpu_efficiency``, ``floors``, ``bound``, ``runner_up``, ``margin``."""
    f = o.floors
    return {
        "s_per_proof": num(o.s_per_proof, S_DIGITS),
        "gpu_efficiency": num(o.gpu_efficiency, FRACTION_DIGITS),
        "floors": {k: v for k, v in floors_dict(f).items() if k.endswith("_s")},
        "bound": f.bound,
        "runner_up": f.runner_up,
        "margin": num(f.margin, FRACTION_DIGITS),
        "pw": int(f.pw),
        "gpu_workers": int(f.workers),
    }


def whatif_dict(w: WhatIf, log: str | Path, session: Session) -> dict:
    """The ``cuzk-timeline-whatif/1`` JSON object (``session`` counts from 1, as people read
    it; ``index`` is its position in the log's list of sessions, from 0)."""
    return {
        "format": FORMAT,
        "log": display_path(log),
        "session": session.number,
        "index": session.index,
        "knobs": w.knobs.changed(),
        "measured": outcome_dict(w.measured),
        "baseline": outcome_dict(w.baseline),
        "scenario": outcome_dict(w.scenario),
        # The scenario had every job whose arrival the log hides arrived only as it started
        # (the scenario takes each as arrived with the job before it): null without one.
        "late_arrivals": None
        if w.late is None
        else {
            "hidden_arrivals": w.hidden_arrivals,
            "s_per_proof": num(w.late.s_per_proof, S_DIGITS),
        },
        # The scenario with its queue bounded at the most the log shows queued, where it
        # queued more and the log shows no bound: null otherwise.
        "bounded_queue": None
        if w.bounded is None
        else {"queue_cap": w.bounded_at, "s_per_proof": num(w.bounded.s_per_proof, S_DIGITS)},
        # The scenario with the tied jobs whose order the log does not show the other way
        # round: null without such ties.
        "other_order": None
        if w.swapped is None
        else {"tied_jobs": w.tied_jobs, "s_per_proof": num(w.swapped.s_per_proof, S_DIGITS)},
        "replay_error": num(w.replay_error, FRACTION_DIGITS),
        "sentence": sentence(w),
        "notes": list(w.notes),
    }


def rows(w: WhatIf) -> list[Row]:
    """figure | measured | replayed | predicted."""
    runs = (w.measured, w.baseline, w.scenario)
    out: list[Row] = [
        ("s/proof", *(sec(o.s_per_proof, "") for o in runs)),
        ("GPU efficiency", *(pct(o.gpu_efficiency) for o in runs)),
    ]
    for name in FLOORS:
        out.append((f"{LABEL[name]} floor (s/proof)", *(_floor(o.floors, name) for o in runs)))
    out.append(("binding floor", *(_bound(o.floors) for o in runs)))
    shape = (f"{o.floors.pw} / {o.floors.workers}" for o in runs)
    out.append(("synthesis slots / GPU workers", *shape))
    return [tuple(c.strip() for c in r) for r in out]


def _floor(f: Floors, name: str) -> str:
    value = f.values()[name]
    return sec(value, "") + (" *" if name == f.bound else "")


def _bound(f: Floors) -> str:
    if f.bound is None:
        return "-"
    if f.runner_up is None:
        return LABEL[f.bound]
    return f"{LABEL[f.bound]} ({percent(f.margin)} ahead of {LABEL[f.runner_up]})"


def _title(w: WhatIf, name: str, session: Session) -> str:
    return f"What if: {w.describe()} ({name}, session {session.number})"


def whatif_text(w: WhatIf, log: str | Path, session: Session) -> str:
    out = [_title(w, display_path(log), session), "", text_table(HEAD, rows(w)), "", sentence(w)]
    out += ["(* = the binding floor)"]
    out += [f"note: {n}" for n in w.notes]
    return "\n".join(out) + "\n"


def whatif_markdown(w: WhatIf, log: str | Path, session: Session) -> str:
    out = [f"## {_title(w, markdown_text(log), session)}", markdown_table(HEAD, rows(w))]
    out.append(sentence(w))
    out += [f"> note: {n}" for n in w.notes]
    return "\n\n".join(out) + "\n"
