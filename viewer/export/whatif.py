"""A what-if as a terminal table, Markdown or JSON (``cuzk-timeline-whatif/1``).

Three columns: the run as measured, its replay unchanged (how far the replay is
from the log) and the replay with the knobs (the prediction).
"""

from __future__ import annotations

from pathlib import Path

from viewer.analysis.floors import FLOORS, LABEL, Floors
from viewer.analysis.memory import MemoryModel
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
        "wall_s_per_proof": num(o.wall_s_per_proof, S_DIGITS),
        # A budget-gated daemon's memory budget (GiB) and the synthesis workers it sized
        # from it (viewer.sim.budget); null where none was played or stated.
        "budget_gib": o.facts.total_budget_gib,
        "synth_workers": o.facts.synth_worker_count,
    }


def gib_pair(v: tuple[float, float]) -> list[float]:
    """[lower, upper] GiB, to one decimal."""
    return [num(v[0], 1), num(v[1], 1)]


def scenario_dict(w: WhatIf) -> dict:
    """The scenario's figures with the band it stands behind, the memory it holds and the
    load model."""
    out = outcome_dict(w.scenario)
    out["memory_gib"] = gib_pair(w.memory_gib(w.scenario))
    band = w.band
    out["band"] = None if band is None else [num(band[0], S_DIGITS), num(band[1], S_DIGITS)]
    out["load"] = load_dict(w)
    return out


def load_dict(w: WhatIf) -> dict | None:
    """``model`` (the fitted curve), ``logs`` it was fitted from, ``range`` (busy threads
    the logs cover, per stage class), ``beyond`` and the ``ends`` of what they allow."""
    f = w.load
    if f is None:
        return None
    c = f.contention
    return {
        "model": "processor sharing: rate 1 / ((1 + a (min(L, cores) - 1)) max(1, L / cores))",
        "slopes": {"synth": c.synth, "cpu": c.cpu, "kernel": c.kernel},
        "cores": c.cores,
        "cores_shown": f.cores_shown,
        # Past the cores, the share of GPU-worker calls that wake onto a CPU a synthesis
        # holds and share it (0: every thread an even share), fitted where the logs show it.
        "waker": c.waker,
        "shown": dict(f.shown),
        "logs": list(f.logs),
        "range": {k: [num(lo, 2), num(hi, 2)] for k, (lo, hi) in f.seen.items()},
        "scatter": {
            k: {"fixed": num(a, 4), "fitted": num(b, 4)} for k, (a, b) in f.scatter.items()
        },
        "beyond": list(w.beyond),
        "ends": [{"assumes": label, "s_per_proof": num(v, S_DIGITS)} for label, v in w.load_ends],
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
        "measured": {**outcome_dict(w.measured), "memory_gib": gib_pair(w.memory_gib(w.measured))},
        "baseline": {**outcome_dict(w.baseline), "memory_gib": gib_pair(w.memory_gib(w.baseline))},
        # What a partition holds in each state, GiB (viewer.analysis.memory): the memory
        # figures are the most held at once under it, lower and upper end.
        "memory_model": memory_model_dict(w.memory_model),
        "scenario": scenario_dict(w),
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
        ("wall time / proofs (s)", *(sec(o.wall_s_per_proof, "") for o in runs)),
        ("GPU efficiency", *(pct(o.gpu_efficiency) for o in runs)),
    ]
    for name in FLOORS:
        out.append((f"{LABEL[name]} floor (s/proof)", *(_floor(o.floors, name) for o in runs)))
    out.append(("binding floor", *(_bound(o.floors) for o in runs)))
    out.append(("memory held at most (GiB)", *(gib_range(w.memory_gib(o)) for o in runs)))
    shape = (f"{o.floors.pw} / {o.floors.workers}" for o in runs)
    out.append(("synthesis slots / GPU workers", *shape))
    if any(o.facts.budget_gated for o in runs):
        out.append(("memory budget (GiB) / synthesis workers", *(_budget(o) for o in runs)))
    return [tuple(c.strip() for c in r) for r in out]


def _budget(o: Outcome) -> str:
    """ "200 / 14": a budget-gated run's budget and the workers it sized; "-" for none."""
    f = o.facts
    if not f.budget_gated:
        return "-"
    return f"{f.total_budget_gib or '?'} / {f.synth_worker_count or '?'}"


def gib_range(v: tuple[float, float]) -> str:
    """ "235-453" (GiB, whole)."""
    lo, hi = round(v[0]), round(v[1])
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def memory_model_dict(m: MemoryModel) -> dict:
    """The memory model's figures, GiB (pairs: lower, upper end)."""
    return {
        "baseline_gib": m.baseline_gib,
        "partition_gib": list(m.partition_gib),
        "synth_peak_gib": m.synth_peak_gib,
        "after_gib": list(m.after_gib),
    }


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


def load_text(w: WhatIf) -> str:
    """One line on the load model: "load: synthesis +5.6 % ... (from 5 logs, ...)"."""
    return "" if w.load is None else f"load: {w.load.describe()}"


def memory_text(w: WhatIf) -> str:
    """One line on the memory figures: what they count and assume."""
    return (
        f"memory: the most the pipeline holds at once, from what each partition is doing "
        f"({w.memory_model.describe()}); peak RSS can sit above it"
    )


def whatif_text(w: WhatIf, log: str | Path, session: Session) -> str:
    out = [_title(w, display_path(log), session), "", text_table(HEAD, rows(w)), "", sentence(w)]
    out += ["(* = the binding floor)"]
    if w.load is not None:
        out.append(load_text(w))
    out.append(memory_text(w))
    out += [f"note: {n}" for n in w.notes]
    return "\n".join(out) + "\n"


def whatif_markdown(w: WhatIf, log: str | Path, session: Session) -> str:
    out = [f"## {_title(w, markdown_text(log), session)}", markdown_table(HEAD, rows(w))]
    out.append(sentence(w))
    if w.load is not None:
        out.append(markdown_text(load_text(w)))
    out.append(markdown_text(memory_text(w)))
    out += [f"> note: {n}" for n in w.notes]
    return "\n\n".join(out) + "\n"
