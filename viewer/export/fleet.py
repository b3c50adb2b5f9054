"""Many logs at once: one compact record per session (a JSON line or a table row).

A fleet of provers writes one log each; ``report LOG... --json-lines`` / ``--table`` read
them in parallel (one process per log, see ``viewer.commands.report``) and print one
record per session, in the order the logs were given.  Each record holds the figures a
person scans a fleet for, not the per-gap and per-transition rows of ``report --json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from viewer.analysis import SessionSummary
from viewer.analysis.floors import LABEL, no_floors
from viewer.analysis.gpus import overall_efficiency
from viewer.analysis.units import percent
from viewer.export.format import (
    FRACTION_DIGITS,
    S_DIGITS,
    display_path,
    num,
    pct,
    sec,
    text_table,
)
from viewer.export.report import floors_dict, summaries

FORMAT = "cuzk-timeline-fleet/1"
TABLE_HEAD = (
    "log",
    "session",
    "pw",
    "gw",
    "GPUs",
    "budget",
    "s/proof",
    "efficiency",
    "bound",
    "cold start",
    "skipped",
)


def knobs_dict(sm: SessionSummary) -> dict:
    """The settings a run used, as its log states them (``Session.facts``: the head's,
    which hold for its first session) or shows them: pw the most syntheses at once, gw the
    GPU workers per GPU, the GPUs, the memory budget of a budget-gated daemon, the mean
    kernel.  ``stated`` says which were stated."""
    from viewer.whatif.sweep import knob_values, stated_knobs

    said = stated_knobs(sm.session.facts)
    v = knob_values(sm.session, said)
    return {
        "pw": None if v["pw"] is None else int(v["pw"]),
        "gw": None if v["gw"] is None else int(v["gw"]),
        "gpus": int(sm.floors.gpus),
        "budget_gib": v["budget"],
        "kernel_ms": num(v["kernel"], 1),
        "stated": sorted(k for k, x in said.items() if x),
    }


def session_record(log: str, sm: SessionSummary) -> dict:
    """The fleet record of one session (``session`` counts from 1; ``index`` from 0).  A
    session without a GPU call has a ``note`` saying so, and no floors or cold start."""
    tp = sm.throughput
    s = sm.session
    note = no_floors(s, log)
    record = {
        "format": FORMAT,
        "log": log,
        "session": s.number,
        "index": int(s.index),
        "events": int(s.events),
        "skipped_lines": sm.skipped_lines,
        "skipped_share": num(s.skipped_share(), FRACTION_DIGITS),
        "jobs_completed": int(tp.jobs_completed),
        "knobs": knobs_dict(sm),
        "measured_s_per_proof": num(tp.measured_s_per_proof, S_DIGITS),
        "theoretical_s_per_proof": num(tp.theoretical_s_per_proof, S_DIGITS),
        "gpu_efficiency": num(overall_efficiency(sm.gpus), FRACTION_DIGITS),
        "cold_start_ms": num(sm.cold_start_ms),
        "floors": floors_dict(sm.floors),
        "verdict": {
            "kind": sm.verdict.kind,
            "sentence": sm.verdict.sentence,
            "warning": sm.verdict.warning or None,
        },
    }
    if note:
        record.update(note=note, cold_start_ms=None)
    return record


def log_records(
    path: str, workers_per_gpu: int | None = None, session: int | None = None
) -> list[dict]:
    """Every session record of one log (or only session number ``session``, counted from 1
    as people read it); an ``error`` record when it cannot be read.  Runs in a worker
    process: everything it returns is plain data."""
    from viewer.io import LogError, open_log

    name = display_path(path)
    try:
        is_dir = Path(path).is_dir()
    except OSError as exc:  # a folder on the way that cannot be searched
        return [{"format": FORMAT, "log": name, "error": f"{name}: {exc.strerror or exc}"}]
    if is_dir:  # named, with no log in it (``expand``)
        from viewer.io.paths import folder_problem

        return [{"format": FORMAT, "log": name, "error": f"{name}: {folder_problem(path)}"}]
    try:
        timeline = open_log(path, workers_per_gpu=workers_per_gpu)
        position = None if session is None else timeline.numbered(session).index
        return [session_record(name, sm) for sm in summaries(timeline, position)]
    except (LogError, OSError, ValueError) as exc:
        return [{"format": FORMAT, "log": name, "error": str(exc)}]


def _knob(value: object, unit: str = "") -> str:
    return (
        "-"
        if value is None
        else f"{value:g}{unit}"
        if isinstance(value, float)
        else f"{value}{unit}"
    )


def died_record(path: str, *_rest: object) -> dict:
    """The record of a log whose reading process died twice (killed, or out of memory)."""
    name = display_path(path)
    return {
        "format": FORMAT,
        "log": name,
        "error": f"{name}: the process reading it died twice (killed, or out of memory?)",
    }


def table_row(r: dict) -> tuple[str, ...]:
    if "error" in r:
        return (r["log"], "-", "-", "-", "-", "-", "-", "-", f"error: {r['error']}", "-", "-")
    share = r["skipped_share"] or 0.0
    skipped = f"{r['skipped_lines']} ({percent(share)})" if r["skipped_lines"] else "0"
    if r.get("note"):  # no GPU call: no figures to show
        blank = ("-",) * 6
        return (r["log"], str(r["session"]), *blank, "no GPU call: no floors", "-", skipped)
    k = r["knobs"]
    f = r["floors"]
    bound = LABEL[f["bound"]] if f["bound"] else "-"
    if f["bound"] and f["margin"] is not None:
        bound += f" (+{percent(f['margin'], 0)})"
    eff = r["gpu_efficiency"]
    return (
        r["log"],
        str(r["session"]),
        _knob(k["pw"]),
        _knob(k["gw"]),
        _knob(k["gpus"]),
        _knob(k["budget_gib"], " GiB"),
        sec(r["measured_s_per_proof"], "").strip(),
        "-" if eff is None else pct(eff),
        bound,
        sec((r["cold_start_ms"] or 0.0) / 1000),
        skipped,
    )


def fleet_table(records: Sequence[dict]) -> str:
    """One row per session: the knobs it used (a sweep's table), s/proof, GPU efficiency,
    binding floor (and its lead over the runner-up), cold start, skipped lines."""
    return text_table(TABLE_HEAD, [table_row(r) for r in records])


def expand(patterns: Sequence[str], notes: list[str] | None = None) -> list[str]:
    """The logs named: each pattern that is not a file is read as a glob (sorted), a folder
    gives its logs (``io.paths.expand_paths``); a pattern matching nothing, a folder with
    no log and one that cannot be listed stay, so that reading them reports them.  A log
    reached twice is read once; ``notes`` gets what was left out and why."""
    from viewer.io.paths import expand_paths

    paths = expand_paths(patterns, globs=True, keep_empty=True, notes=notes)
    return [str(x) for x in paths]
