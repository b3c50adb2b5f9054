"""A sweep: runs of one machine lined up by the knob they differ in, measured against
predicted, with the memory each value needs (no Qt).

Tuning cuzk is a sweep (cuzk-project.md: "Partition Workers Sweep", "Low-Memory
Configuration Sweep"): one knob stepped over several runs, each row's s/proof and peak
memory written down, the best value picked and the best that fits the machine's RAM.
Here the runs are the logs: each log's knob values are what its head states (a harness's
config line, a budget-gated daemon's budget) or else what it shows (the most syntheses at
once, GPU workers per GPU, the mean kernel).  The knob is the one the runs differ in (the
most distinct values; ``--knob`` to choose); runs that also differ in another knob are
set apart, named.  The load model (``viewer.whatif.load``) is fitted over every run, and
the base run (the middle value) is replayed at each value: measured points beside the
predicted curve with its band, as the what-if gives it, and the memory range of each.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from viewer.analysis.cache import forget
from viewer.analysis.floors import slots_seen
from viewer.analysis.kernels import kernel_stats
from viewer.analysis.memory import DEFAULT as DEFAULT_MEMORY
from viewer.analysis.memory import MemoryModel
from viewer.model import Session
from viewer.whatif.knobs import MAX_MS, MAX_PW, MAX_WORKERS, KnobError, Knobs
from viewer.whatif.load import LoadFit, fit, sample
from viewer.whatif.predict import bare_session, measure, play, take

FORMAT = "cuzk-timeline-sweep/1"
#: The knobs a sweep lines runs up by, with their words (as people write them: every
#: title and label of a sweep, text or chart, takes them from here) and unit.
KNOBS = {
    "pw": ("partition workers", ""),
    "gw": ("GPU workers per GPU", ""),
    "kernel": ("kernel time", " ms"),
    "budget": ("memory budget", " GiB"),
}
#: Measured values within this fraction of the best measured s/proof are the best region:
#: two runs of one machine class differ by about 4 % (real_h200/README.md), a rerun of one
#: machine by 0.1 %.
REGION = 0.05
#: Mean kernels within this fraction are one setting (a kernel's time moves with load).
KERNEL_SAME = 0.10
MAX_VALUES = 64
#: Logs a sweep takes: the load model is fitted over all of them, each set apart in turn
#: (time grows with their square: 40 logs take seconds, 200 minutes).
MAX_RUNS = 64
#: Names a message lists before "and N more".
LISTED = 6


class SweepError(ValueError):
    """Runs that do not make a sweep; the message says why, naming the logs."""


@dataclass(frozen=True, eq=False)
class Run:
    """One log's session with its knob values (None: neither stated nor shown)."""

    name: str
    session: Session
    values: dict[str, float | None]
    stated: frozenset[str] = frozenset()  # the knobs its head states (not inferred)
    cpus: int | None = None
    sessions: int = 1  # the daemon sessions in its log (the one with the most GPU calls swept)


@dataclass(frozen=True)
class Row:
    """One value of the knob: the run measured at it (None: predicted only) and the
    prediction from the base run."""

    value: float
    run: Run | None
    s_per_proof: float | None  # measured, interval between completions
    wall_s_per_proof: float | None  # measured, wall time / proofs
    predicted: float | None
    band: tuple[float, float] | None
    predicted_wall: float | None
    memory_gib: tuple[float, float]
    beyond: bool  # the prediction leaves the loads the logs cover


@dataclass(frozen=True)
class Sweep:
    knob: str
    base: Run
    rows: tuple[Row, ...]
    apart: tuple[tuple[Run, str], ...]  # runs not in the sweep, with why
    load: LoadFit
    memory_model: MemoryModel
    ram_gib: float | None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def basis(self) -> str:
        """ "measured" where any row has a measured s/proof (the logs are the truth), else
        "predicted": what ``best`` and ``best_within_ram`` compare."""
        return "measured" if any(r.s_per_proof is not None for r in self.rows) else "predicted"

    def figure(self, r: Row) -> float | None:
        return r.s_per_proof if self.basis == "measured" else r.predicted

    @property
    def best(self) -> Row | None:
        rows = [r for r in self.rows if self.figure(r) is not None]
        return min(rows, key=self.figure) if rows else None

    @property
    def best_within_ram(self) -> Row | None:
        """The best row whose memory range's upper end fits ``ram_gib`` (None without it,
        or where none fits)."""
        if self.ram_gib is None:
            return None
        rows = [
            r for r in self.rows if self.figure(r) is not None and r.memory_gib[1] <= self.ram_gib
        ]
        return min(rows, key=self.figure) if rows else None

    @property
    def region(self) -> tuple[float, float] | None:
        """The lowest and highest value whose figure is within REGION of the best (the
        values between them included: a region, not a set)."""
        best = self.best
        if best is None:
            return None
        top = self.figure(best) * (1 + REGION)
        near = [r.value for r in self.rows if (f := self.figure(r)) is not None and f <= top]
        return min(near), max(near)

    def value_text(self, v: float) -> str:
        return value_text(self.knob, v)


def knob_title(knob: str) -> str:
    """The knob's words opening a title: "GPU workers per GPU", "Partition workers"
    (the first letter raised, no other lowered)."""
    words = KNOBS[knob][0]
    return words[:1].upper() + words[1:]


def knob_label(knob: str) -> str:
    """The knob's words naming an axis: its option name where the words do not hold it,
    its unit after a comma ("partition workers (pw)", "kernel time, ms")."""
    words, unit = KNOBS[knob]
    name = words if knob in words.split() else f"{words} ({knob})"
    return name + (f", {unit.strip()}" if unit else "")


def value_text(knob: str, v: float) -> str:
    """ "pw 8", "kernel 1824 ms", "budget 256 GiB"."""
    unit = KNOBS[knob][1]
    return f"{knob} {v:.4g}{unit}" if unit else f"{knob} {v:.0f}"


def knob_values(session: Session, stated: dict[str, float | None]) -> dict[str, float | None]:
    """The knob values of a run: what the log states, else what it shows (pw: the most
    syntheses at once; gw: GPU workers per GPU; kernel: the mean kernel, ms)."""
    out: dict[str, float | None] = {}
    pw = stated.get("pw")
    out["pw"] = float(pw) if pw else float(slots_seen(session)) or None
    gw = stated.get("gw")
    if not gw:
        per_gpu = [len(ws) for ws in session.gpus.values() if ws]
        gw = max(Counter(per_gpu).items(), key=lambda kv: (kv[1], kv[0]))[0] if per_gpu else None
    out["gw"] = float(gw) if gw else None
    k = kernel_stats(session).mean_ms
    out["kernel"] = float(k) if k is not None and math.isfinite(k) and k > 0 else None
    budget = stated.get("budget")
    out["budget"] = float(budget) if budget else None
    return out


def stated_knobs(facts) -> dict[str, float | None]:  # noqa: ANN001
    """The knobs a log's head states (``Facts``; a session other than the first has none:
    the head is the first daemon run's)."""
    return {"pw": facts.pw, "gw": facts.gw, "budget": facts.total_budget_gib}


def run_of(name: str, timeline) -> Run:  # noqa: ANN001
    """The ``Run`` of a log's session with the most GPU calls: its knob values as its head
    states them (``Session.facts``, read by the reader) or as it shows them.  The head is
    the first daemon run's: where the session swept is a later one, its settings are what
    it shows (a log of two runs at pw 4 and pw 16 is not the pw 16 run at pw 4)."""
    try:
        session = timeline.numbered(None)
    except ValueError as exc:
        raise SweepError(f"{name}: {exc}") from None
    if not np.isfinite(np.asarray(session.partitions["gpu_start"], dtype=float)).any():
        raise SweepError(
            f"{name}: no GPU call (GPU_START) in session {session.number}: nothing to measure "
            "or replay; leave it out of the sweep"
        )
    stated = stated_knobs(session.facts)
    return Run(
        name,
        session,
        knob_values(session, stated),
        stated=frozenset(k for k, v in stated.items() if v),
        cpus=timeline.sessions[0].facts.cpus,  # the machine's, whichever run is swept
        sessions=len(timeline.sessions),
    )


def read_runs(paths: list, workers_per_gpu: int | None, display_path) -> list[Run]:  # noqa: ANN001
    """A ``Run`` per log, for the command and the window alike (``display_path``: how a
    path is named to people); SweepError says why one cannot be read (too many logs, one
    given twice, one that is not a cuzk log)."""
    from viewer.io import LogError, open_log
    from viewer.io.paths import file_identity

    if len(paths) > MAX_RUNS:  # before reading them: the sweep would refuse them anyway
        raise SweepError(
            f"{len(paths)} logs: a sweep takes at most {MAX_RUNS} (the load model is fitted "
            "over every one); give the runs of one sweep"
        )
    runs, seen = [], set()
    for path in paths:
        ident = file_identity(path)
        if ident in seen:
            raise SweepError(f"{display_path(path)} is given twice")
        seen.add(ident)
        try:
            timeline = open_log(path, workers_per_gpu=workers_per_gpu)
        except (LogError, OSError) as exc:
            raise SweepError(str(exc)) from None
        runs.append(run_of(display_path(path), timeline))
    return runs


def same(knob: str, a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    if knob == "kernel":
        return abs(a / b - 1.0) <= KERNEL_SAME
    return a == b


#: Which knob a tie goes to: a budget-gated daemon sizes its synthesis workers from the
#: budget, so where budgets differ the workers follow them (``derived``).
TIE_ORDER = ("budget", "pw", "gw", "kernel")


def derived(knob: str) -> tuple[str, ...]:
    """The knobs that follow ``knob`` (not compared when sweeping it)."""
    return ("pw",) if knob == "budget" else ()


def choose_knob(runs: list[Run]) -> str:
    """The knob the runs differ in most (distinct values; on a tie, ``TIE_ORDER``)."""
    best, most = None, 1
    for knob in TIE_ORDER:
        values = [r.values[knob] for r in runs if r.values[knob] is not None]
        distinct = _distinct(knob, values)
        if len(distinct) > most:
            best, most = knob, len(distinct)
    if best is None:
        groups: dict[str, list[str]] = {}
        for r in runs:
            groups.setdefault(_settings(r), []).append(r.name)
        raise SweepError(
            "the runs do not differ in any knob (pw, gw, kernel, budget): "
            + "; ".join(f"{listed(names)} {s}" for s, names in groups.items())
        )
    return best


def listed(names: list[str], most: int = LISTED) -> str:
    """ "a, b, c" or "a, b, c and 7 more": a message that stays a line."""
    more = len(names) - most
    return ", ".join(names[:most]) + (f" and {more} more" if more > 0 else "")


def _apart_text(apart: list[tuple[Run, str]]) -> str:
    """ "; set apart: a.log: differs in gw 3 (the others: gw 2), ..." (empty: none)."""
    if not apart:
        return ""
    return "; set apart: " + listed([f"{r.name}: {why}" for r, why in apart])


def _distinct(knob: str, values: list[float]) -> list[float]:
    out: list[float] = []
    for v in sorted(values):
        if not out or not same(knob, out[-1], v):
            out.append(v)
    return out


def _settings(r: Run) -> str:
    parts = [value_text(k, v) for k, v in r.values.items() if v is not None]
    return "(" + ", ".join(parts) + ")"


def _modal(knob: str, runs: list[Run]) -> float | None:
    """The value of ``knob`` most runs share."""
    groups: list[tuple[float | None, int]] = []
    for r in runs:
        v = r.values[knob]
        for i, (g, n) in enumerate(groups):
            if same(knob, g, v):
                groups[i] = (g, n + 1)
                break
        else:
            groups.append((v, 1))
    return max(groups, key=lambda g: g[1])[0] if groups else None


def _knobs_for(knob: str, value: float) -> Knobs:
    if knob == "pw":
        return Knobs(pw=int(value))
    if knob == "gw":
        return Knobs(gw=int(value))
    if knob == "kernel":
        return Knobs(kernel_ms=float(value))
    if "budget_gib" not in Knobs.__dataclass_fields__:
        raise SweepError("a budget sweep needs the --budget-gib knob of the what-if")
    return Knobs(**{"budget_gib": float(value)})


def check_value(knob: str, value: float) -> float:
    """``value`` as the knob takes it, or SweepError naming the range."""
    ok = math.isfinite(value)
    if knob in ("pw", "gw"):
        top = MAX_PW if knob == "pw" else MAX_WORKERS
        ok = ok and value == int(value) and 1 <= value <= top
        rng = f"a whole number from 1 to {top}"
    elif knob == "kernel":
        ok = ok and 0 < value <= MAX_MS
        rng = f"more than 0 and at most {MAX_MS:g} ms"
    else:
        ok = ok and 0 < value <= 1 << 20
        rng = "more than 0 and at most 1048576 GiB"
    if not ok:
        raise SweepError(f"--values: {knob} must be {rng}, not {value!r}")
    return float(value)


def default_values(knob: str, measured: list[float]) -> list[float]:
    """The runs' values, and between each two a value half-way (geometric for worker
    counts, whole numbers): a curve, not only points."""
    vals = sorted(set(measured))
    out = set(vals)
    for a, b in zip(vals, vals[1:], strict=False):
        mid = math.sqrt(a * b) if knob in ("pw", "gw") else (a + b) / 2
        mid = float(round(mid)) if knob in ("pw", "gw", "budget") else mid
        if a < mid < b:
            out.add(mid)
    return sorted(out)


def sweep(
    runs: list[Run],
    knob: str | None = None,
    values: list[float] | None = None,
    ram_gib: float | None = None,
    memory_model: MemoryModel = DEFAULT_MEMORY,
    base: str | None = None,
    *,
    consume: bool = False,
) -> Sweep:
    """The sweep of ``runs`` (module docstring); SweepError where they do not make one.

    ``consume``: the caller keeps no other reference to the runs (the command line, the
    window): ``runs`` is emptied, each log's tables are let go once its figures are taken,
    before the base run is replayed, and the sweep's runs hold their sessions without them
    (1.5 M one-call jobs: ~370 MB of the log beside each value's played run)."""
    knob, kept, apart, base_run, points = _lineup(runs, knob, values, base)
    measured_values = [r.values[knob] for r in kept]
    load = fit([sample(r.session, r.name, r.cpus) for r in runs])
    # Each run's measured figures, taken while its tables are at hand (the base run's are
    # the what-if's own)
    figures = {id(r): _figures(r.session, consume) for r in kept if r is not base_run}
    held = [base_run.session]
    if consume:
        bare = {id(r): replace(r, session=bare_session(r.session)) for r in runs}
        given, runs = runs, [bare[id(r)] for r in runs]
        if isinstance(given, list):  # (a tuple's caller keeps its logs: nothing to empty)
            given.clear()
        del given
        kept = [bare[id(r)] for r in kept]
        apart = [(bare[id(r)], why) for r, why in apart]
        figures = {id(bare[i]): f for i, f in figures.items()}
        base_run = bare[id(base_run)]
        del bare
    taken = take(held.pop(), load, memory_model, consume=consume, keep_base=not consume)
    figures[id(base_run)] = (taken.measured.s_per_proof, taken.measured.wall_s_per_proof)
    lo_seen, hi_seen = min(measured_values), max(measured_values)
    rows: list[Row] = []
    by_value: dict[float, list[Run]] = {}
    for r in kept:
        by_value.setdefault(r.values[knob], []).append(r)
    for v in sorted(set(points) | set(by_value)):
        w = play(taken, _knobs_for(knob, v))
        s = w.scenario
        outside = not (lo_seen <= v <= hi_seen)
        beyond = bool(w.beyond) or outside
        mem = w.memory_gib(s)
        for r in by_value.get(v, [None]):  # type: ignore[list-item]
            m = figures[id(r)] if r is not None else (None, None)
            rows.append(
                Row(
                    value=v,
                    run=r,
                    s_per_proof=m[0],
                    wall_s_per_proof=m[1],
                    predicted=s.s_per_proof,
                    band=w.band,
                    predicted_wall=s.wall_s_per_proof,
                    memory_gib=mem,
                    beyond=beyond,
                )
            )
        # Each value's played run let go before the next is played (a row kept its what-if,
        # read by nothing: 3 values of 1.5 M calls held three played sessions).
        del w, s
    notes = [
        f"{r.name}: {r.sessions} daemon sessions; session {r.session.number} "
        "(the most GPU calls) is swept"
        for r in runs
        if r.sessions > 1
    ]
    for name, off in load.offsets.items():
        words = ", ".join(f"{k} {v * 100:+.0f} %" for k, v in off.items())
        notes.append(f"{name}: no load explains it ({words} against the others): another machine?")
    if memory_model == DEFAULT_MEMORY:
        notes.append(
            "memory: a 32 GiB PoRep partition's sizes (upstream's published figures); "
            "give --partition-gib and --baseline-gib for other proofs"
        )
    return Sweep(
        knob=knob,
        base=base_run,
        rows=tuple(rows),
        apart=tuple(apart),
        load=load,
        memory_model=memory_model,
        ram_gib=ram_gib,
        notes=tuple(notes),
    )


def _lineup(
    runs: list[Run], knob: str | None, values: list[float] | None, base: str | None
) -> tuple[str, list[Run], list[tuple[Run, str]], Run, list[float]]:
    """The knob, the runs swept and those set apart (with why), the base run and the values
    to predict at (``sweep``'s arguments; SweepError where they do not make a sweep)."""
    if len(runs) > MAX_RUNS:
        raise SweepError(
            f"{len(runs)} logs: a sweep takes at most {MAX_RUNS} (the load model is fitted "
            "over every one); give the runs of one sweep"
        )
    if len(runs) < 2 and not values:
        raise SweepError(
            f"one log only ({runs[0].name if runs else 'none'}): a sweep lines up several "
            "runs of one machine; give more logs, or --values to predict from this one"
        )
    cpus = {r.cpus for r in runs if r.cpus is not None}
    if len(cpus) > 1:
        said = ", ".join(f"{r.name} cpus={r.cpus}" for r in runs if r.cpus is not None)
        raise SweepError(f"logs of different machines ({said}): sweep one machine's runs")
    if knob is None:
        try:
            knob = choose_knob(runs) if len(runs) > 1 else "pw"
        except SweepError:
            if not values:
                raise
            knob = "pw"  # runs of one setting, as one log: --values predicts from them
    if knob not in KNOBS:
        raise SweepError(f"--knob must be one of {', '.join(KNOBS)}, not {knob!r}")
    apart: list[tuple[Run, str]] = []
    members = []
    for r in runs:
        if r.values[knob] is None:
            apart.append((r, f"its {KNOBS[knob][0]} is neither stated nor shown"))
            continue
        members.append(r)
    others = [k for k in KNOBS if k != knob and k not in derived(knob)]
    fixed = {k: _modal(k, members) for k in others}
    kept = []
    for r in members:
        differs = [k for k in others if not same(k, r.values[k], fixed[k])]
        if differs:
            what = ", ".join(
                f"{value_text(k, r.values[k]) if r.values[k] is not None else k + ' unknown'}"
                f" (the others: {value_text(k, fixed[k]) if fixed[k] is not None else 'unknown'})"
                for k in differs
            )
            apart.append((r, f"differs in {what}"))
        else:
            kept.append(r)
    if not kept:
        raise SweepError(f"no run is left to sweep {KNOBS[knob][0]} over{_apart_text(apart)}")
    measured_values = [r.values[knob] for r in kept]
    if len(_distinct(knob, measured_values)) < 2 and not values:
        raise SweepError(
            f"the runs do not differ in {KNOBS[knob][0]} "
            f"(all {value_text(knob, measured_values[0])}): "
            "choose another --knob, or give --values to predict" + _apart_text(apart)
        )
    if base is not None:
        chosen = [r for r in kept if r.name == base]
        if not chosen:
            why = next((w for r, w in apart if r.name == base), None)
            if why is not None:
                raise SweepError(f"--base {base} is not one of the swept runs: {why}")
            raise SweepError(f"--base {base} is not one of the swept runs (not a LOG given)")
        base_run = chosen[0]
    else:
        order = sorted(kept, key=lambda r: r.values[knob])
        base_run = order[(len(order) - 1) // 2]
    wanted = [check_value(knob, v) for v in values] if values else None
    if wanted is not None and len(wanted) > MAX_VALUES:
        raise SweepError(f"--values: at most {MAX_VALUES} values, not {len(wanted)}")
    points = sorted(set(wanted if wanted is not None else default_values(knob, measured_values)))
    # Every value is replayed, each run's own too: one the what-if cannot take is said now,
    # before any log is let go, naming the runs at it.
    for v in sorted(set(points) | {r.values[knob] for r in kept}):
        try:
            _knobs_for(knob, v)
        except KnobError as exc:
            who = [r.name for r in kept if r.values[knob] == v]
            said = f"{listed(who)}: {value_text(knob, v)} cannot be replayed ({exc})"
            raise SweepError(said if who else str(exc)) from None
    return knob, kept, apart, base_run, points


def _figures(session: Session, consume: bool) -> tuple[float | None, float | None]:
    """A measured run's s/proof and wall time / proofs (``consume``: the tables it made of
    the session let go after)."""
    m = measure(session)
    if consume:
        forget(session)
    return m.s_per_proof, m.wall_s_per_proof


def errors(s: Sweep) -> list[tuple[float, float]]:
    """(value, predicted / measured - 1) of every measured row with a prediction."""
    return [
        (r.value, r.predicted / r.s_per_proof - 1.0)
        for r in s.rows
        if r.s_per_proof and r.predicted is not None
    ]


def as_array(s: Sweep, what: str) -> np.ndarray:
    """A column of the rows as floats (NaN where missing): value, s_per_proof, predicted..."""
    return np.array([np.nan if (x := getattr(r, what)) is None else x for r in s.rows], dtype=float)
