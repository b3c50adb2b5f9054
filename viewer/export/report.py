"""The report: every figure of ``viewer.analysis`` as text, Markdown or JSON.

One code path for the ``report`` command and the GUI's "export report": the
figures come from ``summarize`` and are only formatted here.  The Markdown
tables have the shape of the published reference (metric | value;
transition | gap | overlap).
"""

from __future__ import annotations

import functools
import math
import os
import sys
import types
from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

import numpy as np

from viewer.analysis import SessionSummary, summarize
from viewer.analysis.budget import Budget, budget
from viewer.analysis.cache import forget_since, made
from viewer.analysis.floors import FLOORS, LABEL, REMEDY, Floors, no_floors
from viewer.analysis.groups import Groups
from viewer.analysis.headroom import Headroom, remedy
from viewer.analysis.intervals import Range
from viewer.analysis.kernels import parts_note
from viewer.analysis.transitions import cold_start_parts, interleaved
from viewer.analysis.units import counted
from viewer.export.format import (
    FRACTION_DIGITS,
    ROWS_CHUNK,
    S_DIGITS,
    Row,
    Rows,
    bools,
    display_path,
    ints,
    json_bytes,
    json_parts,
    markdown_table,
    markdown_table_parts,
    markdown_text,
    ms,
    num,
    nums,
    pct,
    sec,
    strs,
    strs_or_none,
    text_table,
)
from viewer.export.processes import process_map
from viewer.export.tables import select_sessions
from viewer.model import Timeline

SCHEMA = "cuzk-timeline-report/1"
T = TypeVar("T")
S = TypeVar("S", str, bytes)
TEXT_TRANSITION_ROWS = 40  # a terminal shows the first ones; --json / --markdown have all


#: Sessions a log needs before ``map_sessions`` forks processes for them: starting a pool
#: costs ~50 ms, a session's summary ~1 ms.
PARALLEL_SESSIONS = 200
_SHARED: tuple | None = None  # (timeline, rng, part) for the forked processes
#: Sessions a forked process summarizes at a time, at most about (its parts are held until
#: the span is done: 30 000 daemon runs in 8 spans held ~25 MB more in each process).
SPAN_SESSIONS = 500


def map_sessions(
    timeline: Timeline,
    session: int | None,
    rng: Range,
    part: Callable[[SessionSummary], T],
    jobs: int = 1,
) -> list[T]:
    """``part(summary)`` of every session (or only ``session``), in order (see
    ``iter_sessions``)."""
    return list(iter_sessions(timeline, session, rng, part, jobs))


def iter_sessions(
    timeline: Timeline,
    session: int | None,
    rng: Range,
    part: Callable[[SessionSummary], T],
    jobs: int = 1,
) -> Iterator[T]:
    """``part(summary)`` of every session (or only ``session``), in order, each as soon as
    it and those before it are known: a caller writes them out as they come, and never
    holds the report of thousands of daemon runs at once (forked processes work at most a
    few spans ahead of the one written: ``processes.AHEAD``).  With ``jobs`` > 1 and a log of
    many daemon runs, ``jobs`` forked processes summarize them (the sessions are
    independent; the processes share the loaded log as it is in memory); ``part`` must then
    return something picklable.  A bad ``session`` raises here, before anything is made."""
    chosen = select_sessions(timeline, session)
    n = len(chosen)
    # No more processes than cores (more would only add forks), each with ~100 sessions.
    jobs = min(jobs, os.cpu_count() or 1, n // (PARALLEL_SESSIONS // 2))
    # Linux only: macOS offers fork, but system libraries (Accelerate, Qt) are not safe in
    # a forked child there; elsewhere there is no fork.
    forking = sys.platform.startswith("linux")
    if jobs <= 1 or n < PARALLEL_SESSIONS or not forking or _SHARED is not None:
        return (part(sm) for sm in _summaries(chosen, rng))
    return _forked(timeline, rng, part, n, jobs)


def _forked(
    timeline: Timeline, rng: Range, part: Callable[[SessionSummary], T], n: int, jobs: int
) -> Iterator[T]:
    """``iter_sessions`` over ``jobs`` forked processes, a span of sessions each."""
    global _SHARED
    cuts = np.linspace(0, n, max(4 * jobs, n // SPAN_SESSIONS) + 1).round().astype(int).tolist()
    spans = [(span,) for span in zip(cuts, cuts[1:], strict=False)]
    _SHARED = (timeline, rng, part)  # read by the forked processes
    done = 0
    try:
        try:
            for chunk in process_map(_summarize_range, spans, jobs):
                done += 1
                yield from chunk
        except BrokenProcessPool:  # a process was killed (out of memory?): this one goes on
            for span in spans[done:]:
                yield from _summarize_range(*span)
    finally:
        _SHARED = None


def _summarize_range(span: tuple[int, int]) -> list:
    """In a forked process: ``part`` of the sessions at positions ``[a, b)``."""
    assert _SHARED is not None
    timeline, rng, part = _SHARED
    return [_whole(part(sm)) for sm in _summaries(timeline.sessions[span[0] : span[1]], rng)]


def _whole(part: object) -> object:
    """A part made in pieces (a generator: ``_session_json``, ``_section_text``) joined, to
    be sent back."""
    if not isinstance(part, types.GeneratorType):
        return part
    pieces = list(part)
    return pieces[0][:0].join(pieces) if pieces else ""


def summaries(
    timeline: Timeline, session: int | None = None, rng: Range = None
) -> Iterator[SessionSummary]:
    """One summary per session (or only session ``session``), all in ``rng``, one at a time:
    the whole-session tables a summary needed are let go once the next is asked for, unless
    they were there before (the window keeps its own), so a log of thousands of daemon runs
    is reported in the memory of one."""
    return _summaries(select_sessions(timeline, session), rng)


def _summaries(sessions: list, rng: Range) -> Iterator[SessionSummary]:
    for s in sessions:
        had = made(s)
        yield summarize(s, rng)
        forget_since(s, had)


# ---- JSON -----------------------------------------------------------------------------------


def summary_dict(sm: SessionSummary, source: object = None, *, rows: bool = False) -> dict:
    """The JSON object of one session (see ``report_dict``; ``source``: the log, named in
    the note of a session without a GPU call); ``rows``: its tables (idle gaps, jobs,
    transitions) left as ``Rows``, for ``json_parts`` to write a chunk of rows at a time."""
    s = sm.session
    table = Rows if rows else _records
    no_call = no_floors(s, "" if source is None else display_path(source))
    gaps = sm.gaps[["gpu", "start", "end", "ms", "cross_sector", "starved"]]
    by_gpu = Groups(gaps["gpu"])
    gap_rows = {
        g: table(
            start_ms=(part["start"], nums),
            end_ms=(part["end"], nums),
            ms=(part["ms"], nums),
            cross_sector=(part["cross_sector"], bools),
            starved=(part["starved"], bools),
        )
        for g, part in zip(
            by_gpu.keys.tolist(), map(gaps.take, by_gpu.split(np.arange(len(gaps)))), strict=True
        )
    }
    jobs = sm.jobs
    t = sm.transitions
    k = sm.kernel
    tp = sm.throughput
    out = {
        "session": s.number,
        "index": int(s.index),
        "events": int(s.events),
        "skipped_lines": sm.skipped_lines,
        "open_intervals": sm.open_intervals,
        "range_ms": None if sm.rng is None else [num(sm.rng[0]), num(sm.rng[1])],
        "start_ms": num(s.start_ms),
        "end_ms": num(s.end_ms),
        "notes": [*s.notes, no_call] if no_call else list(s.notes),
        "cold_start_ms": num(sm.cold_start_ms),
        "gpus": [
            {
                "gpu": int(g.gpu),
                "workers": [int(w) for w in g.workers],
                "first_start_ms": num(g.first_start_ms),
                "last_end_ms": num(g.last_end_ms),
                "busy_ms": num(g.busy_ms),
                "idle_ms": num(g.idle_ms),
                "efficiency": num(g.efficiency, FRACTION_DIGITS),
                "cold_start_ms": num(g.cold_start_ms),
                "idle_gaps": gap_rows.get(g.gpu, []),
            }
            for g in sm.gpus
        ],
        "jobs": table(
            job_id=(jobs["job_id"], strs),
            kind=(jobs["kind"], strs_or_none),
            partitions=(jobs["partitions"], ints),
            first_gpu_start_ms=(jobs["first_gpu_start"], nums),
            completed_ms=(jobs["completed"], nums),
        ),
        "transitions": table(
            **{"from": (t["from_id"], strs), "to": (t["to_id"], strs)},
            time_ms=(t["time"], nums),
            gap_ms=(t["gap_ms"], nums),
            overlap_ms=(t["overlap_ms"], nums),
            starved=(t["starved"], bools),
            cold_start=(t["cold_start"], bools),
            worker=(t["worker"], ints),
        ),
        "kernel": {
            "source": k.source,
            "total_ms": num(k.total_ms),
            "mean_ms": num(k.mean_ms),
            "partitions": int(k.partitions),
            "breakdown_ms": {name: num(v) for name, v in k.breakdown_ms.items()},
            "per_worker_ms": {str(w): num(v) for w, v in k.per_worker.items()},
            "per_gpu_ms": {str(g): num(v) for g, v in k.per_gpu.items()},
            "blocks": int(s.kernel_blocks),
            "ambiguous_blocks": int(s.ambiguous_blocks),
            "unattributed_blocks": int(s.unattributed_blocks),
            "unattributed_ms": num(k.unattributed_ms),
        },
        "gpu_ms_total": num(k.gpu_call_ms),
        "synth_ms_total": num(k.synth_ms),
        "throughput": {
            "theoretical_s_per_proof": num(tp.theoretical_s_per_proof, S_DIGITS),
            "measured_s_per_proof": num(tp.measured_s_per_proof, S_DIGITS),
            "ratio": num(tp.ratio, FRACTION_DIGITS),
            "jobs_completed": int(tp.jobs_completed),
            "partitions_per_proof": tp.partitions_per_proof,
            "gpus": int(tp.gpus),
        },
        "floors": floors_dict(sm.floors),
        # What more synthesis concurrency gains by the log's own load, where the verdict
        # says (null elsewhere): viewer.analysis.headroom.
        "synthesis_concurrency": None if sm.headroom is None else sm.headroom.to_dict(),
        # A budget-gated daemon's memory budget and the concurrency it implies (null for a
        # daemon with a fixed pw, or a session whose head was not read).
        "budget": budget_dict(budget(s)),
        "verdict": {
            "kind": sm.verdict.kind,
            "sentence": sm.verdict.sentence,
            "evidence": list(sm.verdict.evidence),
            "warning": sm.verdict.warning or None,
        },
    }
    return out


def budget_dict(b: Budget | None) -> dict | None:
    """``total_gib`` (as the log states it), ``synth_workers`` (logged, or sized from the
    budget as the daemon does: ``workers_logged``), ``max_partitions_in_budget``,
    ``max_parallel_synthesis``, ``baseline_gib`` (SRS and PCE) and ``partitions_at_once``
    (whose reservations fit beside it); null when the daemon is not budget-gated."""
    if b is None:
        return None
    return {
        "total_gib": b.total_gib,
        "synth_workers": b.workers,
        "workers_logged": b.workers_logged,
        "max_partitions_in_budget": b.partitions_in_budget,
        "max_parallel_synthesis": b.max_parallel,
        "baseline_gib": num(b.baseline_gib, 1),
        "partitions_at_once": b.at_once,
        "budget_binds": b.binds,
    }


def floors_dict(f: Floors) -> dict:
    """The four floors in s/proof, the synthesis slots seen, which binds and by how much."""
    return {
        "kernel_s": num(f.kernel_s, S_DIGITS),
        "worker_s": num(f.worker_s, S_DIGITS),
        "synthesis_s": num(f.synthesis_s, S_DIGITS),
        "arrival_s": num(f.arrival_s, S_DIGITS),
        "pw": int(f.pw),
        "gpu_workers": int(f.workers),
        "jobs": int(f.jobs),
        "inferred_arrivals": int(f.inferred_arrivals),
        "bound": f.bound,
        "runner_up": f.runner_up,
        "margin": num(f.margin, FRACTION_DIGITS),
        "upper_bound": bool(f.upper_bound),
    }


def report_dict(
    timeline: Timeline, session: int | None = None, rng: Range = None, jobs: int = 1
) -> dict:
    """The ``cuzk-timeline-report/1`` JSON object of ``timeline`` (``jobs``: see
    ``iter_sessions``)."""
    return {
        **_report_head(timeline),
        "sessions": map_sessions(
            timeline, session, rng, functools.partial(summary_dict, source=timeline.source), jobs
        ),
    }


def report_json_parts(
    timeline: Timeline, session: int | None = None, rng: Range = None, jobs: int = 1
) -> Iterator[bytes]:
    """``json_bytes(report_dict(...))`` in pieces, a session at a time (``iter_sessions``):
    the same bytes, never held whole."""
    head = json_bytes({**_report_head(timeline), "sessions": []}, newline=False)
    assert head.endswith(b"[]}")  # the sessions come last
    return _joined(
        head[:-2],
        iter_sessions(
            timeline, session, rng, functools.partial(_session_json, source=timeline.source), jobs
        ),
        b",",
        b"]}\n",
    )


def _report_head(timeline: Timeline) -> dict:
    return {
        "schema": SCHEMA,
        "source": str(timeline.source),
        "skipped_lines": int(sum(timeline.skipped.values())),
    }


def _records(**fields: object) -> list[dict]:
    """``Rows(**fields).records()``: a table made at once."""
    return Rows(**fields).records()


def _session_json(sm: SessionSummary, source: object = None) -> bytes | Iterator[bytes]:
    """A session's JSON: at once, or where a table is longer than a chunk its tables a
    chunk of rows at a time (``json_parts``)."""
    if max(len(sm.jobs), len(sm.transitions), len(sm.gaps)) <= ROWS_CHUNK:
        return json_bytes(summary_dict(sm, source), newline=False)
    return json_parts(summary_dict(sm, source, rows=True), newline=False)


def _joined(head: S, parts: Iterator[S | Iterator[S]], sep: S, end: S) -> Iterator[S]:
    """``head + sep.join(parts) + end``, a part at a time (a part may come in pieces)."""
    yield head
    for i, p in enumerate(parts):
        if isinstance(p, str | bytes):
            yield (sep + p) if i else p
        else:
            pieces = iter(p)
            first = next(pieces, None)
            if first is not None:
                yield (sep + first) if i else first
            yield from pieces
    yield end


# ---- tables -----------------------------------------------------------------------------------


def metric_rows(sm: SessionSummary) -> list[Row]:
    """The metric | value table: the reference figures first, then the context."""
    k, tp = sm.kernel, sm.throughput
    what = (
        "GPU call time (upper bound: no CUZK_TIMING lines)" if k.upper_bound else "CUDA kernel time"
    )
    per = "serial" if tp.gpus <= 1 else f"on {tp.gpus} GPUs,"
    rows: list[Row] = [
        (f"mean {what} per partition", ms(k.mean_ms)),
        (
            f"{per} {'CUDA' if not k.upper_bound else 'GPU call'} time per sector "
            f"({tp.partitions_per_proof} partitions)",
            sec(tp.theoretical_s_per_proof),
        ),
        ("measured throughput", sec(tp.measured_s_per_proof, "s/proof")),
    ]
    active = [g for g in sm.gpus if math.isfinite(g.efficiency)]
    if len(sm.gpus) <= 1:
        rows.append(
            (
                "GPU efficiency (merged intervals)",
                pct(active[0].efficiency if active else math.nan),
            )
        )
    else:
        rows += [(f"GPU {g.gpu} efficiency (merged intervals)", pct(g.efficiency)) for g in sm.gpus]
    cross = float(np.nansum(sm.gaps["ms"][sm.gaps["cross_sector"]]))
    rows.append(("cross-sector GPU idle gaps", ms(cross)))
    rows.append(("theoretical / measured", "-" if tp.ratio is None else f"{tp.ratio:.2f}"))
    if not k.upper_bound and k.partitions:
        share = {
            n: v / k.total_ms * k.mean_ms if k.total_ms else math.nan
            for n, v in k.breakdown_ms.items()
        }
        over = "" if not parts_note(k) else f" (the parts add to {pct(k.parts_share)} of it)"
        rows.append(
            (
                "kernel breakdown per partition",
                " / ".join(f"{n} {ms(v)}" for n, v in share.items()) + over,
            )
        )
    idle = float(np.nansum(sm.gaps["ms"]))
    starved = float(np.nansum(sm.gaps["ms"][sm.gaps["starved"]]))
    rows += [
        (
            "GPU idle gaps (starved / dispatch)",
            f"{ms(idle)} ({ms(starved)} / {ms(idle - starved)})",
        ),
        ("cold start", cold_start_text(sm)),
        ("jobs completed", str(tp.jobs_completed)),
        ("partitions with kernel time / open GPU calls", f"{k.partitions} / {sm.open_intervals}"),
    ]
    s = sm.session
    if s.ambiguous_blocks or s.unattributed_blocks:
        rows.append(
            (
                "CUZK_TIMING blocks: ambiguous / matched to no call",
                f"{s.ambiguous_blocks} / {s.unattributed_blocks} of {s.kernel_blocks} "
                f"({ms(s.unattributed_kernel_ms)} in the total, on no worker)",
            )
        )
    rows += [
        (
            "GPU call time / synthesis time",
            f"{sec(k.gpu_call_ms / 1000)} / {sec(k.synth_ms / 1000)}",
        ),
    ]
    if (b := budget(s)) is not None:
        rows.append(("memory budget (budget-gated daemon)", b.describe()))
    return rows


def cold_start_text(sm: SessionSummary) -> str:
    """ "37750 ms: 33260 ms to the first GPU call + 4490 ms in 1 transition while filling":
    the one figure with its two parts (domain.md), so that a transition marked "in the cold
    start" never reads as a second, different cold start."""
    head, fill, n = cold_start_parts(sm.session, sm.rng)
    if not n:
        return ms(sm.cold_start_ms)
    return (
        f"{ms(sm.cold_start_ms)}: {ms(head)} to the first GPU call + {ms(fill)} in "
        f"{counted(n, 'transition')} while filling"
    )


def transition_rows(sm: SessionSummary, most: int | None = None) -> list[Row]:
    """transition | gap | overlap, labelled "sector N->N+1" by job order in the session
    (the first ``most`` of them: a terminal's report of 1.5 M jobs formatted every row
    to print 40)."""
    t = sm.transitions
    if most is not None and len(t) > most:
        t = t[:most]
    return _transition_rows_of(t)


def _transition_rows_of(t) -> list[Row]:
    """``transition_rows`` of the transitions ``t`` (a table, or rows of one)."""
    # "(cold start)" as the published table writes it: the metric "cold start" names this
    # gap as one of its parts (``cold_start_text``).
    note = np.where(t["cold_start"], " (cold start)", np.where(t["starved"], " (starved)", ""))
    # A gap the worker spent on other sectors' calls is no idle time: say what it waited.
    mixed = interleaved(t)
    if mixed.any():
        idle = [f" (interleaved: worker idle {ms(v)})" for v in t["worker_idle_ms"][mixed]]
        note = note.astype(object)
        note[mixed] = idle
    return [
        (f"sector {a}->{b}", f"{ms(gap)}{n}", ms(ov))
        for a, b, gap, n, ov in zip(
            t["from_job"], t["to_job"], t["gap_ms"], note, t["overlap_ms"], strict=True
        )
    ]


def floor_rows(f: Floors, room: Headroom | None = None) -> list[Row]:
    """floor | s/proof | what it is made of | what relieving it takes; the binding one marked
    (``room``: what more synthesis concurrency gains by the log's load, where known)."""
    m = f.means_ms
    made = {
        "kernel": f"mean kernel {ms(m['kernel'])} x {f.partitions_per_proof} / {f.gpus} GPU",
        "worker": (
            f"mean call {ms(m['call'])}"
            if f.upper_bound
            else f"mean prep {ms(m['prep'])} + kernel {ms(m['kernel'])} + post {ms(m['post'])}"
        )
        + f" x {f.partitions_per_proof} / {f.workers} GPU workers",
        "synthesis": f"mean synthesis {ms(m['synth'])} x {f.partitions_per_proof} / {f.pw} at once",
        "arrival": f"{f.jobs} job arrivals ({f.inferred_arrivals} inferred from slot waits)",
    }
    out = []
    for name in FLOORS:
        value = f.values()[name]
        mark = " (binding)" if name == f.bound else ""
        helps = remedy(room, REMEDY[name]) if name == "synthesis" else REMEDY[name]
        out.append((f"{LABEL[name]}{mark}", sec(value, "s/proof"), made[name], helps))
    return out


def gpu_rows(sm: SessionSummary) -> list[Row]:
    return [
        (
            str(g.gpu),
            ",".join(map(str, g.workers)),
            ms(g.busy_ms),
            ms(g.idle_ms),
            pct(g.efficiency),
            ms(g.cold_start_ms),
        )
        for g in sm.gpus
    ]


METRIC_HEAD = ("metric", "value")
TRANSITION_HEAD = (
    "transition",
    "gap (last GPU_END of N -> first GPU_START of N+1)",
    "overlap with N's last partition",
)
GPU_HEAD = ("GPU", "workers", "busy", "idle", "efficiency", "cold start")
FLOOR_HEAD = ("floor", "value", "from", "relieved by")


def _title(sm: SessionSummary) -> str:
    rng = "" if sm.rng is None else f", range {sm.rng[0]:.0f}-{sm.rng[1]:.0f} ms"
    return (
        f"Session {sm.session.number}: {sm.events} events, {sm.skipped_lines} skipped lines, "
        f"{sm.open_intervals} open intervals, kernel source {sm.kernel.source}{rng}"
    )


def report_markdown(
    timeline: Timeline, session: int | None = None, rng: Range = None, jobs: int = 1
) -> str:
    """Markdown tables in the shape of the published reference, one section per session
    (``jobs``: see ``iter_sessions``)."""
    return "".join(report_markdown_parts(timeline, session, rng, jobs))


def report_markdown_parts(
    timeline: Timeline, session: int | None = None, rng: Range = None, jobs: int = 1
) -> Iterator[str]:
    """``report_markdown`` in pieces, a session at a time."""
    title = f"# cuzk timeline report: {markdown_text(timeline.source)}"
    section = functools.partial(_markdown_section, source=timeline.source)
    return _sections(title, section, "\n\n", timeline, session, rng, jobs)


def _sections(
    title: str,
    section: Callable[[SessionSummary], list[str]],
    sep: str,
    timeline: Timeline,
    session: int | None,
    rng: Range,
    jobs: int,
) -> Iterator[str]:
    """``title``, then each session's blocks (``section``), each after ``sep``, then a line
    end: a text report in pieces, a session at a time."""
    part = functools.partial(_section_text, section, sep)
    return _joined(title, iter_sessions(timeline, session, rng, part, jobs), "", "\n")


def _section_text(
    section: Callable[[SessionSummary], list[str | Iterator[str]]], sep: str, sm: SessionSummary
) -> str | Iterator[str]:
    """One session's blocks (``section``) as the text that follows what came before: one
    string, or a block at a time where a block comes in pieces (a long table)."""
    blocks = section(sm)
    if all(isinstance(b, str) for b in blocks):
        return "".join(sep + block for block in blocks)
    return _pieces(sep, blocks)


def _pieces(sep: str, blocks: list[str | Iterator[str]]) -> Iterator[str]:
    for block in blocks:
        if isinstance(block, str):
            yield sep + block
        else:
            yield sep
            yield from block


def _markdown_section(sm: SessionSummary, source: object = "") -> list[str]:
    """One session's blocks of ``report_markdown`` (``source``: the log, named where the
    session has no GPU call and so no floors)."""
    out = [f"## {_title(sm)}", markdown_table(METRIC_HEAD, metric_rows(sm))]
    no_call = no_floors(sm.session, display_path(source))
    out.append(
        f"**{markdown_text(no_call)}**"
        if no_call
        else markdown_table(FLOOR_HEAD, floor_rows(sm.floors, sm.headroom))
    )
    if len(sm.transitions):
        out.append(_transition_table(sm.transitions))
    if len(sm.gpus) > 1:
        out.append(markdown_table(GPU_HEAD, gpu_rows(sm)))
    out.append(f"**Verdict ({sm.verdict.kind}):** {sm.verdict.sentence}")
    if sm.verdict.warning:
        out.append(f"**Warning:** {sm.verdict.warning}")
    out.append("\n".join(f"- {e}" for e in sm.verdict.evidence))
    out += [f"> note: {markdown_text(n)}" for n in sm.session.notes]
    return out


def _transition_table(t) -> Iterator[str]:
    """``markdown_table(TRANSITION_HEAD, transition_rows(...))`` a chunk of rows at a time."""
    return markdown_table_parts(TRANSITION_HEAD, len(t), lambda a, b: _transition_rows_of(t[a:b]))


def report_text(
    timeline: Timeline, session: int | None = None, rng: Range = None, jobs: int = 1
) -> str:
    """Plain aligned tables for a terminal (long transition lists are cut; ``jobs``: see
    ``iter_sessions``)."""
    return "".join(report_text_parts(timeline, session, rng, jobs))


def report_text_parts(
    timeline: Timeline, session: int | None = None, rng: Range = None, jobs: int = 1
) -> Iterator[str]:
    """``report_text`` in pieces, a session at a time."""
    title = f"cuzk timeline report: {display_path(timeline.source)}"
    section = functools.partial(_text_section, source=timeline.source)
    return _sections(title, section, "\n", timeline, session, rng, jobs)


def _text_section(sm: SessionSummary, source: object = "") -> list[str]:
    """One session's lines of ``report_text`` (``source``: the log, named where the session
    has no GPU call and so no floors)."""
    out = ["", _title(sm), "", text_table(METRIC_HEAD, metric_rows(sm))]
    no_call = no_floors(sm.session, display_path(source))
    out += ["", no_call or text_table(FLOOR_HEAD, floor_rows(sm.floors, sm.headroom))]
    rows = transition_rows(sm, TEXT_TRANSITION_ROWS)
    if rows:
        out += ["", text_table(TRANSITION_HEAD, rows)]
        if len(sm.transitions) > TEXT_TRANSITION_ROWS:
            more = len(sm.transitions) - TEXT_TRANSITION_ROWS
            out.append(f"... {more} more (see --markdown or --json)")
    out += ["", text_table(GPU_HEAD, gpu_rows(sm))]
    out += ["", f"Verdict ({sm.verdict.kind}): {sm.verdict.sentence}"]
    if sm.verdict.warning:
        out.append(f"Warning: {sm.verdict.warning}")
    out += [f"  - {e}" for e in sm.verdict.evidence]
    out += [f"  note: {n}" for n in sm.session.notes]
    return out
