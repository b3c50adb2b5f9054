"""A what-if: the measured run, its replay unchanged (the baseline) and with knobs (the
scenario), each with its s/proof, GPU efficiency and floors."""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field, replace
from weakref import WeakKeyDictionary

import numpy as np

from viewer.analysis.cache import forget
from viewer.analysis.floors import LABEL, Floors, arrivals, floors
from viewer.analysis.gpus import session_efficiency
from viewer.analysis.jobs import completions, no_spacing_reason, seconds_per_proof, throughput
from viewer.analysis.kernels import kernel_stats
from viewer.analysis.memory import DEFAULT as DEFAULT_MEMORY
from viewer.analysis.memory import MemoryModel, memory_peak
from viewer.analysis.units import counted, per_proof, percent
from viewer.model import Session
from viewer.model.facts import Facts
from viewer.sim.contention import Contention
from viewer.sim.model import Schedule, scaled
from viewer.whatif.cold import straggler_note
from viewer.whatif.knobs import Knobs
from viewer.whatif.load import (
    CLASS_WORDS,
    STAGE_CLASS,
    LoadFit,
    fit,
    profile,
    sample,
    synthesis_peak,
)
from viewer.whatif.replay import (
    Plan,
    load_factors,
    plan,
    played_facts,
    played_intervals,
    played_session,
    predicted_session,
    queue_depth,
    replay,
    stage_means,
    waited_for_slots,
    with_load,
    with_other_order,
    with_work,
)

FORMAT = "cuzk-timeline-whatif/1"


@dataclass(frozen=True, eq=False)
class Outcome:
    """The figures of one run, measured or played.

    A played run's Session (``session``) is made from its schedule when asked and kept only
    while something else holds it (the compare window): at 10^6 events one is ~30 MB and
    its analysis tables ~70 MB more, and a what-if has several runs (issue 28 item 5)."""

    s_per_proof: float | None  # over the jobs the log completed
    gpu_efficiency: float
    floors: Floors
    #: The measured Session, or the (session index, schedule) a played one is made from;
    #: None once a what-if that consumed its log let the schedule go (``let_go``).
    run: Session | tuple[int, Schedule] | None = field(repr=False)
    #: Wall time / proofs, as cuzk-bench prints it: (last completion - first arrival) /
    #: jobs, the cold start included (domain.md "Two throughput figures").
    wall_s_per_proof: float | None = None

    @property
    def session(self) -> Session:
        """The run as a Session (a played one: the same object while it is held)."""
        if isinstance(self.run, Session):
            return self.run
        if self.run is None:
            raise ValueError("the run was let go once its figures were made (consume)")
        with _lock:
            made = self.__dict__.get("_made")
            got = None if made is None else made()
            if got is None:
                got = played_session(*self.run)
                self.__dict__["_made"] = weakref.ref(got)
        return got

    @property
    def facts(self) -> Facts:
        """What the run's log head states (a played one's without making its Session)."""
        if self.run is None:
            return self.__dict__["_facts"]
        return self.run.facts if isinstance(self.run, Session) else played_facts(self.run[1].config)

    def memory_gib(self, model: MemoryModel = DEFAULT_MEMORY) -> tuple[float, float]:
        """(lower, upper) end of the most memory the run holds at once under ``model``, GiB
        (computed once per model)."""
        with _lock:
            got = self.__dict__.setdefault("_memory", {}).get(model)
        if got is None:
            got = memory_peak(self.session, model)
            with _lock:
                self.__dict__["_memory"][model] = got
        return got


def let_go(o: Outcome, model: MemoryModel) -> Outcome:
    """``o`` with its figures, its facts and its memory under ``model``, and no run: a
    played run's schedule is let go (a what-if that consumed its log keeps two otherwise:
    1.5 M calls, 66 MB each)."""
    out = replace(o, run=None)
    out.__dict__["_facts"] = o.facts
    out.__dict__["_memory"] = {model: o.memory_gib(model)}
    return out


@dataclass(frozen=True)
class Throughput:
    """The throughput figures of a played end of what the log cannot show (``WhatIf.late``,
    ``.bounded``, ``.swapped``): its s/proof and wall time / proofs, no more."""

    s_per_proof: float | None
    wall_s_per_proof: float | None = None


@dataclass(frozen=True, eq=False)
class WhatIf:
    """What ``knobs`` would do to ``measured``'s run."""

    knobs: Knobs
    measured: Outcome
    baseline: Outcome  # the replay, unchanged
    scenario: Outcome  # the replay with the knobs
    schedule: Schedule  # the scenario as played (``viewer.sim.writer`` writes it as a log)
    notes: tuple[str, ...]
    was: dict[str, float | int | None]  # what each knob replaces: the replayed shape and means
    #: The scenario with every inferred arrival at its latest (``replay(latest=True)``):
    #: the other end of what the log allows; None when no arrival is inferred or no knob set.
    late: Throughput | None = None
    hidden_arrivals: int = 0  # jobs whose arrival the log hides (waited for a synthesis slot)
    #: The scenario with its queue bounded at the most the log shows queued at once, where it
    #: queued more and no bound was seen (the daemon's is unknown): None otherwise.
    bounded: Throughput | None = None
    bounded_at: int = 0  # that bound: the most partitions the log shows queued at once
    #: The scenario with the tied jobs whose order the log does not show the other way round
    #: (``replay.with_other_order``); None without such ties or a knob set.
    swapped: Throughput | None = None
    tied_jobs: int = 0  # jobs in those ties
    load: LoadFit | None = None  # how stages slow down under load (None: fixed durations)
    #: The scenario under each other load model the logs allow: (why, s/proof).
    load_ends: tuple[tuple[str, float | None], ...] = ()
    #: Stage classes whose load in the scenario leaves what the logs cover, in words.
    beyond: tuple[str, ...] = ()
    #: The scenario as far either way as a calibration run of the log's own settings lay
    #: from it (``LoadFit.repeat``): (why, s/proof); a run's own spread, which no load
    #: model or stage level shows (a kernel-bound run's levels leave its pace as it is).
    repeat_ends: tuple[tuple[str, float], ...] = ()
    #: What a partition holds in each state (``viewer.analysis.memory``).
    memory_model: MemoryModel = DEFAULT_MEMORY

    def memory_gib(self, o: Outcome) -> tuple[float, float]:
        """(lower, upper) end of the most memory ``o``'s run holds at once, GiB (computed
        once per run: a window asks from the GUI thread what its worker thread made)."""
        return o.memory_gib(self.memory_model)

    def describe(self) -> str:
        """The knobs with what they replace: "gw 2 -> 1, kernel 3746 -> 1824 ms"."""
        return self.knobs.describe(self.was)

    @property
    def replay_error(self) -> float | None:
        """Baseline against measured s/proof, as a fraction (how far the replay is off)."""
        m, b = self.measured.s_per_proof, self.baseline.s_per_proof
        return None if m is None or b is None else b / m - 1.0

    @property
    def span(self) -> tuple[float, float] | None:
        """The least and the most s/proof the scenario gives over what the log cannot show
        (its hidden arrivals at their earliest and latest, its queue unbounded and bounded
        at the most seen, its tied jobs in either order), where they differ by more than
        ENDS_MATTER; else None."""
        others = (self.late, self.bounded, self.swapped)
        values = [o.s_per_proof for o in others if o] + [v for _, v in self.load_ends]
        values += [v for _, v in self.repeat_ends]
        return _range(self.scenario.s_per_proof, values)

    @property
    def load_band(self) -> tuple[float, float] | None:
        """The least and the most s/proof over the load models the logs allow (the point
        and ``load_ends``), where they differ by more than ENDS_MATTER; else None."""
        return _range(self.scenario.s_per_proof, [v for _, v in self.load_ends])

    @property
    def band(self) -> tuple[float, float] | None:
        """The least and the most s/proof the prediction stands behind (``span``, or the
        prediction itself where the ends agree); None without a prediction."""
        s = self.scenario.s_per_proof
        if s is None:
            return None
        return self.span or (s, s)

    @property
    def change(self) -> float | None:
        """Scenario against baseline s/proof, as a fraction (negative: faster)."""
        b, s = self.baseline.s_per_proof, self.scenario.s_per_proof
        return None if b is None or s is None else s / b - 1.0


def measure(session: Session) -> Outcome:
    """The measured run's figures, as the report computes them."""
    kernel = kernel_stats(session)
    tp = throughput(session, None, kernel)
    done = completions(session)
    return Outcome(
        s_per_proof=tp.measured_s_per_proof,
        gpu_efficiency=session_efficiency(session),
        floors=floors(session, None, kernel, tp),
        run=session,
        wall_s_per_proof=wall_per_proof(done, arrivals(session)["arrival"]),
    )


def wall_per_proof(done: np.ndarray, arrived: np.ndarray) -> float | None:
    """(last completion - first arrival) / completed jobs, in s (domain.md "Two throughput
    figures"); None without a completed job."""
    ok = np.isfinite(done)
    first = np.nanmin(arrived) if np.isfinite(arrived).any() else np.nan
    if not ok.any() or not np.isfinite(first):
        return None
    span = float(done[ok].max() - first)
    return span / int(ok.sum()) / 1000.0 if span > 0 else None


def outcome(pl: Plan, s: Schedule, memory_model: MemoryModel | None = None) -> Outcome:
    """A played run's figures: s/proof over the jobs the log completed, and its floors as a
    report on the played run's log gives them (and the memory it holds under
    ``memory_model``, while its Session is at hand)."""
    played = predicted_session(pl, s)
    through = throughput_of(pl, s)
    # Each figure's tables of the played run are let go before the next is made (its
    # columns are made from the schedule when read: 1.5 M calls, 12 MB a column).
    efficiency = session_efficiency(played)
    forget(played)
    kernel = kernel_stats(played)  # (the kernel intervals and calls tables: ~200 MB)
    forget(played)
    tp = throughput(played, None, kernel)
    forget(played)
    out = Outcome(
        s_per_proof=through.s_per_proof,
        gpu_efficiency=efficiency,
        # The slots as `report` on its --out log counts them (issue 27 item 6): the knob
        # divided the synthesis floor where the run held fewer at once.
        floors=floors(played, None, kernel, tp),
        run=(pl.session.index, s),  # not the plan: a cache keyed on it holds this
        wall_s_per_proof=through.wall_s_per_proof,
    )
    forget(played)
    out.__dict__["_made"] = weakref.ref(played)
    if memory_model is not None:
        out.__dict__["_memory"] = {memory_model: memory_peak(played, memory_model)}
        forget(played)
    return out


def throughput_of(pl: Plan, s: Schedule) -> Throughput:
    """A played run's s/proof and wall time / proofs over the jobs the log completed, from
    its schedule alone (no Session made)."""
    jobs = len(s.draws.arrival)
    done = np.full(jobs, -np.inf)
    np.maximum.at(done, s.draws.job, np.where(s.end >= 0, s.end, np.nan).astype(np.float64))
    counted = pl.counted if len(pl.counted) == jobs else np.ones(jobs, bool)
    done = np.where(np.isfinite(done), done, np.nan)
    arrived = s.draws.arrival.astype(np.float64)
    return Throughput(
        s_per_proof=seconds_per_proof(done[counted]),
        wall_s_per_proof=wall_per_proof(done[counted], arrived[counted]),
    )


#: Per plan, the measured run and the unchanged replay: every what-if of one plan shares them
#: (a window replays on each knob edit).
_unchanged: WeakKeyDictionary[Plan, tuple[Outcome, Outcome, Schedule]] = WeakKeyDictionary()
_lock = threading.Lock()


def _measured_and_baseline(
    pl: Plan, memory_model: MemoryModel = DEFAULT_MEMORY, measured: Outcome | None = None
) -> tuple[Outcome, Outcome, Schedule]:
    with _lock:
        done = _unchanged.get(pl)
    if done is None:
        base = replay(pl)
        measured = measure(pl.session) if measured is None else measured
        done = (measured, outcome(pl, base, memory_model), base)
        with _lock:
            _unchanged[pl] = done
    return done


#: Per plan, its replay under the load model in use: every what-if of one plan and model
#: shares it (and its unchanged replay, ``_unchanged``).
_loaded: WeakKeyDictionary[Plan, dict[Contention, Plan]] = WeakKeyDictionary()
#: Per plan, how each other load model the logs allow scales its stages (``load_factors``):
#: a what-if plays its knobs under each, and the factors are ~40 % of a plan's draws.
_factors: WeakKeyDictionary[Plan, dict[Contention, dict | None]] = WeakKeyDictionary()
#: Per session, the load model its own log shows (by the CPU threads its log states).
_own: WeakKeyDictionary[Session, dict[int | None, LoadFit]] = WeakKeyDictionary()


def own_load(session: Session, cpus: int | None = None) -> LoadFit:
    """The load model ``session``'s own log shows (computed once per session)."""
    with _lock:
        got = _own.get(session, {}).get(cpus)
    if got is None:
        got = fit([sample(session, "this log", cpus)])
        with _lock:
            _own.setdefault(session, {})[cpus] = got
    return got


def loaded(pl: Plan, contention: Contention) -> Plan:
    """``with_load(pl, contention)``, made once per plan and model (only the latest model's
    kept: a window toggling models would keep a played copy of the plan per model)."""
    with _lock:
        got = _loaded.get(pl, {}).get(contention)
    if got is None:
        got = with_load(pl, contention)
        if got is not pl:  # (the plan itself as a value would keep its key for ever)
            with _lock:
                _loaded[pl] = {contention: got}
    return got


def loaded_anew(pl: Plan, contention: Contention) -> Plan:
    """``with_load(pl, contention)`` from factors computed once per plan and model, its
    draws made anew on each call (another model than the one in use: an end of the band)."""
    with _lock:
        cached = _factors.get(pl, {})
        known = contention in cached
        k = cached.get(contention)
    if not known:
        k = load_factors(pl, contention)
        with _lock:
            _factors.setdefault(pl, {})[contention] = k
    return with_work(pl, contention, k)


@dataclass(frozen=True, eq=False)
class Taken:
    """What every what-if of one log takes from it (``take``): its plans under the load
    model, the measured run's figures and the unchanged replay's.  A sweep plays each of its
    values from one (``play``), the log's tables let go once taken."""

    measured: Outcome
    pl: Plan  # the plan under ``load``'s contention
    base_plan: Plan  # the plan as the log shows it (each other load model scales it)
    load: LoadFit
    memory_model: MemoryModel
    baseline: Outcome  # the replay, unchanged
    #: The unchanged replay's schedule; None where ``take`` let it go (``keep_base``).
    base: Schedule | None
    base_waited: bool  # whether a partition of the unchanged replay waited for a slot


def what_if(
    session: Session,
    knobs: Knobs | None = None,
    pl: Plan | None = None,
    load: LoadFit | None = None,
    memory_model: MemoryModel = DEFAULT_MEMORY,
    *,
    consume: bool = False,
) -> WhatIf:
    """Replay ``session`` unchanged and with ``knobs`` (``pl``: its plan when already made;
    the unchanged replay of a plan is computed once) under ``load``: how its machine's
    stages slow down under load (``viewer.whatif.load``; None: what its own log shows).

    ``consume``: the caller keeps no other reference to ``session`` (the command line):
    once what the replays take from it is taken, its tables are let go before they play
    (1.5 M one-call jobs: ~370 MB of the log beside the played runs); ``measured.session``
    is then the session without its tables, and its memory figure is the one computed."""
    knobs = knobs or Knobs()
    given = [session]
    del session  # (``consume``: ``take`` holds the only reference, and lets it go)
    keep_base = not (consume and knobs.changed())  # a changed replay reads it no more
    taken = take(given.pop(), load, memory_model, pl, consume=consume, keep_base=keep_base)
    return play(taken, knobs)


def take(
    session: Session,
    load: LoadFit | None = None,
    memory_model: MemoryModel = DEFAULT_MEMORY,
    pl: Plan | None = None,
    *,
    consume: bool = False,
    keep_base: bool = True,
) -> Taken:
    """What every what-if of ``session`` takes from it (``what_if``'s arguments).

    ``consume``: the caller keeps no other reference to ``session`` (pass it as
    ``held.pop()``): its tables are let go once taken, before anything is replayed, and
    ``measured.session`` is the session without them.  ``keep_base`` False (with
    ``consume``): the unchanged replay's schedule is let go too, its figures kept; ``play``
    then takes knobs that change something."""
    pl = plan(session, memory_model.baseline_gib) if pl is None else pl
    load = own_load(session) if load is None else load
    base_plan = pl
    pl = loaded(base_plan, load.contention)
    measured = None
    if consume:
        measured, pl, base_plan = _taken_from(session, pl, base_plan, load, memory_model)
    del session
    measured, b, base = _measured_and_baseline(pl, memory_model, measured)
    base_waited = waited_for_slots(base)
    if consume and not keep_base:  # nothing reads the unchanged replay's schedule again
        with _lock:
            _unchanged.pop(pl, None)
        b, base = let_go(b, memory_model), None
    return Taken(measured, pl, base_plan, load, memory_model, b, base, base_waited)


def play(t: Taken, knobs: Knobs) -> WhatIf:
    """The what-if of ``knobs`` on the log ``t`` was taken from (``what_if``)."""
    pl, base_plan, load, memory_model = t.pl, t.base_plan, t.load, t.memory_model
    b, base = t.baseline, t.base
    if not knobs.changed():
        if base is None:
            raise ValueError("no knob changed, and the unchanged replay was let go (take)")
        scen = base
    else:
        scen = replay(pl, knobs)
    late = bounded = swapped = None
    ends: list[tuple[str, float | None]] = []
    beyond: tuple[str, ...] = ()
    notes = list(pl.notes)
    closed = knobs.concurrency is not None or knobs.jobs is not None
    if scen is base:
        scenario = b
    else:
        # Only the scenario is made a Session, and only for its figures: the other ends
        # are their throughput alone.
        scenario = outcome(pl, scen, memory_model)
        beyond, sides = _beyond(load, played_intervals(scen))
        if pl.latest is not None and not closed:
            late = throughput_of(pl, replay(pl, knobs, latest=True, ends=True))
        unbounded = pl.cfg.queue_cap is None and knobs.queue_cap is None
        if unbounded and queue_depth(scen) > pl.queue_seen:
            capped = replace(knobs, queue_cap=pl.queue_seen)
            bounded = throughput_of(pl, replay(pl, capped, ends=True))
        if pl.other_order is not None and not closed:
            other = with_other_order(pl)
            swapped = throughput_of(other, replay(other, knobs, ends=True))
            del other
        shaped = any(getattr(knobs, k) is not None for k in SHAPE_KNOBS)
        for alt in load.alternatives:
            if alt.when in ("above", "below") and alt.when not in sides:
                continue  # it plays this scenario as the point model does
            if alt.when == "load" and not (sides or shaped):
                continue
            other = loaded_anew(base_plan, alt.contention)
            if alt.scale:  # another run of the machine: its stage levels
                other = replace(other, draws=scaled(other.draws, **dict(alt.scale)))
            s_per_proof = throughput_of(other, replay(other, knobs, ends=True)).s_per_proof
            ends.append((alt.label, s_per_proof))
            del other  # (the next model's stages are made without this one's beside them)
        unseen = _unseen_notes(pl, knobs, t.base_waited, scen, scenario, late, bounded, swapped)
        unseen.append(_workers_note(pl, knobs, load))
        cold = (base_plan.synth_start, base_plan.draws.synth.astype(np.float64), base_plan.cfg.pw)
        unseen.append(straggler_note(*cold, len(scen.draws.arrival), scenario.s_per_proof or 0))
        notes[:0] = [n for n in unseen if n] + _load_notes(load, beyond, scenario, ends)
    n = int(pl.counted.sum())
    if t.measured.s_per_proof is None:
        notes.append(no_spacing_reason(n, " in the log"))
    return WhatIf(
        knobs=knobs,
        measured=t.measured,
        baseline=b,
        scenario=scenario,
        schedule=scen,
        notes=tuple(notes),
        was=measured_knobs(pl),
        late=late,
        hidden_arrivals=pl.hidden,
        bounded=bounded,
        bounded_at=pl.queue_seen,
        swapped=swapped,
        tied_jobs=_tied_jobs(pl),
        load=load,
        load_ends=tuple(ends),
        beyond=beyond,
        repeat_ends=_repeat_ends(load, scenario if scen is not base else None),
        memory_model=memory_model,
    )


def _taken_from(
    session: Session, pl: Plan, base_plan: Plan, load: LoadFit, memory_model: MemoryModel
) -> tuple[Outcome, Plan, Plan]:
    """What a what-if takes from ``session`` besides its plans, taken now (the measured
    run's figures and memory, how each other load model scales the plan's stages), and the
    plans on the session without its tables (``what_if``'s ``consume``)."""
    # Each figure's tables of the log let go before the next is made: nothing asks for them
    # again (a plan and the report's tables of 1.5 M calls held ~30 columns of 12 MB).
    forget(session)
    measured = measure(session)
    forget(session)
    held = memory_peak(session, memory_model)
    forget(session)
    factors = {}
    for alt in load.alternatives:
        factors[alt.contention] = load_factors(base_plan, alt.contention)
        forget(session)
    bare = bare_session(session)
    measured = replace(measured, run=bare)
    measured.__dict__["_memory"] = {memory_model: held}
    bare_base = replace(base_plan, session=bare)
    bare_pl = bare_base if pl is base_plan else replace(pl, session=bare)
    with _lock:
        _factors[bare_base] = factors
    return measured, bare_pl, bare_base


def bare_session(session: Session) -> Session:
    """``session`` without its tables (its number, facts and notes kept): what stands for a
    log whose tables were let go once taken."""
    empty = np.zeros(0, np.intp)
    return replace(
        session,
        partitions=session.partitions.take(empty),
        jobs=session.jobs.take(empty),
        unattributed=session.unattributed.take(empty),
    )


#: Knobs that change how many stages run side by side (the load) by design.
SHAPE_KNOBS = ("gw", "pw", "gpus", "jobs", "concurrency", "queue_cap", "budget_gib")


def _beyond(
    load: LoadFit, spans: dict[str, tuple[np.ndarray, np.ndarray]]
) -> tuple[tuple[str, ...], set[str]]:
    """The stage classes whose load in a played run (its ``played_intervals``) leaves what
    the logs cover, in words ("synthesis at 18 busy threads (the logs: 6-10)"), and the
    sides ("above", "below")."""
    prof = profile(spans)
    out = []
    sides: set[str] = set()
    for cls in ("synth", "cpu"):
        loads = []
        for st in (st for st in spans if STAGE_CLASS[st] == cls):
            a, b = spans[st]
            ok = b > a  # (whole ms: none unknown)
            if ok.any():
                loads.append(prof.mean_busy(a[ok], b[ok]))
        if not loads:
            continue
        loads = np.concatenate(loads)
        side = load.beyond(cls, loads)
        if side:
            sides.add(side)
            lo, hi = load.seen[cls]
            at = np.percentile(loads, 90 if side == "above" else 10)
            out.append(
                f"{CLASS_WORDS[cls]} at {at:.0f} busy threads "
                f"(the log{'s' if len(load.logs) > 1 else ''}: {lo:.0f}-{hi:.0f})"
            )
    return tuple(out), sides


def _load_notes(load: LoadFit, beyond: tuple[str, ...], scenario: Outcome, ends: list) -> list[str]:
    """What the load model takes, where the prediction depends on it."""
    out = []
    band = _range(scenario.s_per_proof, [v for _, v in ends])
    if beyond and band is not None:
        lo, hi = band
        out.append(
            "beyond the loads the logs show: "
            + "; ".join(beyond)
            + f". Between {lo:.2f} and {hi:.2f} s/proof by how durations grow past them "
            "(a run at this setting, given with --calibrate, would settle it)"
        )
    out += list(load.notes)
    return out


def _unseen_notes(
    pl: Plan,
    knobs: Knobs,
    base_waited: bool,
    scen: Schedule,
    scenario: Outcome,
    late: Throughput | None,
    bounded: Throughput | None,
    swapped: Throughput | None,
) -> list[str]:
    """What the prediction takes that the log cannot show, where it changes the answer."""
    out = [_hidden_arrivals_note(pl, scenario, late), _queue_note(pl, scen, scenario, bounded)]
    gated = scen.config.budget_gib is not None  # partitions wait for budget, not slots
    if knobs.pw is None and not gated and waited_for_slots(scen) and not base_waited:
        needed = f"{counted(pl.cfg.pw, 'slot')} {'was' if pl.cfg.pw == 1 else 'were'}"
        out.append(
            f"no partition waited for a synthesis slot in the log, so it shows only that "
            f"{needed} needed at once, and the replay has {pl.cfg.pw}; here partitions wait "
            "for one: with more slots in the daemon, the run is faster (set the slots)"
        )
    out.append(_ties_note(pl, scenario, swapped))
    return out


def _workers_note(pl: Plan, knobs: Knobs, load: LoadFit) -> str:
    """Where the GPU workers per GPU change to a count no log of the load ran: how that many
    share the host's CPU (their prep and post-processing) is not in the logs."""
    if knobs.gw is None or knobs.gw == pl.cfg.gw or not load.gws or knobs.gw in load.gws:
        return ""
    ran = " or ".join(str(g) for g in load.gws)
    return (
        f"gw {pl.cfg.gw} -> {knobs.gw}: the logs the load is learned from all ran {ran} GPU "
        f"worker{'s' if load.gws != (1,) else ''} per GPU, and what {knobs.gw} workers' CPU "
        "work (prep, post-processing) costs beside each other does not show in them (on real "
        "H200 runs, prep took 110 ms at gw 1 against 160 ms at gw 2); a run at that setting, "
        "given with --calibrate, would settle it"
    )


#: Two ends of what the log cannot show this far apart (relative to the prediction) differ.
ENDS_MATTER = 0.005
#: The most partitions upstream's queue holds (``synthesis_lookahead``, domain.md).
UPSTREAM_QUEUE_MAX = 32


def _repeat_ends(load: LoadFit, scenario: Outcome | None) -> tuple[tuple[str, float], ...]:
    """``WhatIf.repeat_ends`` of a prediction (None: none made, the log replayed as it is)."""
    s = None if scenario is None else scenario.s_per_proof
    if load.repeat is None or s is None:
        return ()
    name, off = load.repeat
    why = f"a run of these settings {abs(100 * off):.1f} % away, as {name} ran from this log"
    return ((why, s * (1 - abs(off))), (why, s * (1 + abs(off))))


def _range(s: float | None, others: list[float | None]) -> tuple[float, float] | None:
    """The least and the most of ``s`` and ``others`` (None left out), where they differ by
    more than ENDS_MATTER of ``s``; None without ``s`` or such a difference."""
    values = [v for v in others if v is not None]
    if s is None or not values:
        return None
    lo, hi = min([*values, s]), max([*values, s])
    return (lo, hi) if hi - lo > ENDS_MATTER * s else None


def _other_end(scenario: Outcome, other: Throughput | None) -> float | None:
    """The s/proof of ``other`` where it differs from the scenario's, else None."""
    s = scenario.s_per_proof
    t = None if other is None else other.s_per_proof
    return None if s is None or t is None or abs(t - s) <= ENDS_MATTER * s else t


def span_text(span: tuple[float, float]) -> str:
    """``14.1-32.8 by what the log cannot show`` (see ``WhatIf.span`` and the notes)."""
    return f"{figure(span[0])}-{figure(span[1])} by what the log cannot show"


def _queue_note(pl: Plan, scen: Schedule, scenario: Outcome, bounded: Throughput | None) -> str:
    """What the prediction would be with the queue bounded at the most the log shows queued
    ("" when it queued no more, or the bound changes nothing)."""
    t = _other_end(scenario, bounded)
    if t is None:
        return ""
    return (
        f"the prediction queues up to {queue_depth(scen)} partitions at once, and the log never "
        f"shows more than {pl.queue_seen} queued nor a full queue: the daemon's bound is not "
        f"in it (at most {UPSTREAM_QUEUE_MAX}); bounded at {pl.queue_seen}, {per_proof(t)} s/proof"
    )


def _ties_note(pl: Plan, scenario: Outcome, swapped: Throughput | None) -> str:
    """What the prediction would be with the tied jobs the log does not order the other way
    round ("" when there are none or it changes nothing)."""
    t = _other_end(scenario, swapped)
    if t is None:
        return ""
    tied = _tied_jobs(pl)
    return (
        f"{tied} jobs started synthesis in one millisecond and nothing in the log says which "
        f"came first (the queue never took one ahead of another): the prediction keeps the "
        f"log's order; the other way round, {per_proof(t)} s/proof"
    )


def _tied_jobs(pl: Plan) -> int:
    """Jobs whose place the other order changes."""
    perm = pl.other_order
    return 0 if perm is None else int((perm != np.arange(len(perm))).sum())


def _hidden_arrivals_note(pl: Plan, scenario: Outcome, late: Throughput | None) -> str:
    """What the prediction would be had the jobs whose arrival the log hides arrived only
    as they started ("" when no arrival is hidden or it changes nothing)."""
    t = _other_end(scenario, late)
    if t is None:
        return ""
    jobs = len(pl.draws.arrival)
    return (
        f"the log hides when {pl.hidden} of the {jobs} jobs arrived (each waited for a "
        f"synthesis slot): the prediction takes them as a backlog; had each arrived only as it "
        f"started, {per_proof(t)} s/proof"
    )


def measured_knobs(pl: Plan) -> dict[str, float | int | None]:
    """What the replay plays unchanged: the shape by knob name, the stage means (ms)."""
    cfg = pl.cfg
    shape = {"gw": cfg.gw, "pw": cfg.pw, "gpus": cfg.gpus, "queue_cap": cfg.queue_cap}
    return {**shape, "budget_gib": cfg.budget_gib, **stage_means(pl)}


def _band_words(span: tuple[float, float], b: float) -> str:
    """A band against the baseline: "it may gain or lose: between 6.1 % faster and 4.6 %
    slower than the replayed 2.48"."""
    lo, hi = (x / b - 1.0 for x in span)
    than = f"than the replayed {figure(b)}"
    gain, loss = lo < -ENDS_MATTER, hi > ENDS_MATTER
    if gain and loss:
        return f"it may gain or lose: between {percent(-lo)} faster and {percent(hi)} slower {than}"
    if gain and hi < -ENDS_MATTER:
        return f"{percent(-hi)} to {percent(-lo)} faster {than}"
    if gain:
        return f"up to {percent(-lo)} faster {than}, or no gain"
    if loss:
        return f"no gain: up to {percent(hi)} slower {than}"
    return f"no change on the replayed {figure(b)}"


def figure(x: float) -> str:
    """An s/proof to three significant figures at least: 37.4, 2.48, 152."""
    return f"{x:.2f}" if abs(x) < 10 else f"{x:.1f}"


def sentence(w: WhatIf) -> str:
    """One sentence on what the knobs would do and what would bind.  Where the scenario's
    load leaves what the logs cover, the answer is the band, and whether no gain is in it."""
    f = w.scenario.floors
    s, b = w.scenario.s_per_proof, w.baseline.s_per_proof
    if s is None or b is None:
        return "No prediction of s/proof: " + (w.notes[-1] if w.notes else "too few jobs") + "."
    what = w.describe()
    change = w.change or 0.0
    span = w.span
    load_band = w.load_band
    if w.beyond and load_band is not None:
        head = (
            f"With {what}: {figure(load_band[0])}-{figure(load_band[1])} s/proof, past the "
            f"loads the logs show ({_band_words(load_band, b)})"
        )
        if span is not None and (span[0] < load_band[0] or span[1] > load_band[1]):
            head += f", {span_text(span)}"
    else:
        text = f"{figure(s)} s/proof" + ("" if span is None else f" ({span_text(span)})")
        if abs(change) < 0.005:
            head = f"With {what}: {text}, no gain on the replayed {figure(b)}"
        else:
            word = "faster" if change < 0 else "slower"
            head = (
                f"With {what}: {text}, {percent(abs(change))} {word} than the replayed {figure(b)}"
            )
    head += wall_clause(w)
    bound = f.bound
    if bound is None:
        return head + "."
    head += f"; the {LABEL[bound]} floor ({figure(f.values()[bound])} s) binds"
    floor = f.values()[bound]
    if floor and s < floor * (1 - BELOW_FLOOR):
        head += (
            f" (the {figure(s)} s/proof below it is a short run's: its last completions come "
            "closer together than a steady state allows)"
        )
    if f.runner_up is not None:
        head += (
            f", next the {LABEL[f.runner_up]} floor ({figure(f.values()[f.runner_up])} s, "
            f"{percent(f.margin)} behind)"
        )
    return head + _slots_clause(w) + "."


#: The two throughput figures disagree when they move apart by more than this (fraction).
DISAGREE = 0.01
#: A predicted s/proof this far below the binding floor is said to be a short run's.
BELOW_FLOOR = 0.01


def wall_clause(w: WhatIf) -> str:
    """Where wall time / proofs moves the other way from s/proof (issue 27: "16.5 % faster"
    while the predicted run finished later), a clause that says so: the interval between
    completions of a short run is not the run's throughput then."""
    b, s = w.baseline.wall_s_per_proof, w.scenario.wall_s_per_proof
    change = w.change
    if b is None or s is None or not b or change is None:
        return ""
    wall = s / b - 1.0
    if abs(wall) <= DISAGREE or abs(change) <= DISAGREE or (wall < 0) == (change < 0):
        return ""
    word = "slower" if wall > 0 else "faster"
    return (
        f", but wall time / proofs goes from {figure(b)} to {figure(s)} s ({percent(abs(wall))} "
        f"{word}): the completions only bunch {'closer' if change < 0 else 'further apart'}, "
        "the run as a whole does not follow (a longer run, --jobs, would settle it)"
    )


def _slots_clause(w: WhatIf) -> str:
    """Where synthesis binds and the load model shows it slowing with load: up to how many
    slots more of them help (domain.md "Load": not past the point where the logs say
    synthesis throughput stops growing)."""
    if w.load is None or w.scenario.floors.bound != "synthesis" or not w.load.cores_shown:
        return ""
    cfg = w.schedule.config
    peak = synthesis_peak(w.load.contention, cfg.gw * cfg.gpus)
    if peak is None:
        return ""
    if cfg.pw >= peak:
        return (
            f"; more synthesis slots cannot help: past {peak} at once they share the "
            f"{w.load.contention.cores:g} threads the machine runs side by side with the GPU "
            "workers"
        )
    return (
        f"; more synthesis slots help up to about {peak} at once: past that they share the "
        f"{w.load.contention.cores:g} threads the machine runs side by side with the GPU workers"
    )
