"""What more synthesis concurrency can gain, as the log's own load shows (domain.md "Load").

The synthesis floor (mean synthesis x P / pw) falls in proportion to the slots, as if a
partition synthesized as fast beside more of them.  On a real machine it does not: the
syntheses share cores and memory bandwidth with each other and with the GPU workers' CPU
work.  The log's own load fit (``viewer.analysis.load``) says how every stage slowed with
the busy threads beside it, within the loads the log covers.  Here the floors are played
at pw' = pw + d slots: a stage of the log that spent ``T[b]`` ms with ``b`` threads busy
did ``T[b] / f(b)`` work there, and takes ``sum_b T[b] f(b + d) / f(b)`` ms with ``d``
syntheses more beside it (processor sharing, as the what-if's replay plays it).  The
synthesis floor at pw' is its mean so slowed x P / pw'; the GPU worker and kernel floors
slow with their own classes; the arrival floor stays.  The lowest top floor over pw' up to
``HORIZON`` x pw is the most more synthesis concurrency can gain.

Where the log cannot show how synthesis slows (its syntheses all ran beside about as
many busy threads), the point model keeps synthesis at its speed up to the machine's
threads (where the log states or shows them): that is an upper bound, and the figure
with synthesis slowing ``UNSHOWN_SLOPE`` per busy thread is given beside it, with the run
that would settle it.  A log that shows synthesis keeping its speed over a spread of loads
changes nothing: the verdict is today's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from viewer.analysis.cache import per_session
from viewer.analysis.floors import Floors
from viewer.analysis.load import UNSHOWN_SLOPE, LoadFit, Sample, fit, sample
from viewer.analysis.units import percent
from viewer.model import Session
from viewer.sim.contention import Contention

#: More synthesis concurrency is judged up to this many times the slots the log held.
HORIZON = 2
#: A gain under this (fraction of the binding floor) is none.
NO_GAIN = 0.005
#: A session with more partitions than this is fitted on this many of its middle ones (in
#: synthesis start order): the load of a long steady run is the same all along, and the
#: fit's profile of every stage of 10^6 calls would cost hundreds of MB.
FIT_ROWS = 50_000


@dataclass(frozen=True)
class Played:
    """The floors (s/proof) and mean synthesis (ms) at ``pw`` slots under one load model."""

    pw: np.ndarray  # slots, from the log's own up to HORIZON x it
    top: np.ndarray  # the binding floor at each
    synthesis: np.ndarray  # the synthesis floor at each
    synth_ms: np.ndarray  # mean synthesis per partition at each

    def best(self) -> int:
        """Index of the fewest slots whose top floor is within NO_GAIN of the lowest."""
        return int(np.flatnonzero(self.top <= self.top.min() * (1 + NO_GAIN) + 1e-12)[0])

    @property
    def gain(self) -> float:
        """What more slots gain at most: 1 - lowest top floor / top floor now."""
        return float(1.0 - self.top.min() / self.top[0]) if self.top[0] > 0 else 0.0

    @property
    def synthesis_gain(self) -> float:
        """How far more slots lower the synthesis floor alone (fraction)."""
        s = self.synthesis
        return float(1.0 - s.min() / s[0]) if s[0] > 0 else 0.0

    def synthesis_best(self) -> int:
        """Index of the fewest slots whose synthesis floor is within NO_GAIN of its lowest."""
        s = self.synthesis
        return int(np.flatnonzero(s <= s.min() * (1 + NO_GAIN) + 1e-12)[0])


@dataclass(frozen=True)
class Headroom:
    """What more synthesis concurrency gains, by this log's load (module docstring)."""

    pw: int  # the slots the log held at once
    load: LoadFit  # the log's own fit
    #: "keeps": the log shows synthesis keeping its speed over the loads it covers (the
    #: verdict is today's); "slows": it shows synthesis slowing with load, or the machine
    #: time-sharing; "unknown": it cannot show how synthesis slows.
    state: str
    loads: tuple[float, float]  # busy threads beside the log's syntheses (2nd-98th pct)
    point: Played  # under the fitted model
    other: Played | None  # "unknown": synthesis slowing UNSHOWN_SLOPE per busy thread

    @property
    def gain(self) -> float:
        """The most more synthesis concurrency gains (point model: an upper bound)."""
        return max(0.0, self.point.gain)

    @property
    def best_pw(self) -> int:
        return int(self.point.pw[self.point.best()])

    @property
    def settle_pw(self) -> int:
        """A run at this setting settles what the log cannot tell: where the point model
        says the most is gained (at least one slot more than the log held)."""
        p = self.point
        i = p.best() if p.gain >= NO_GAIN else p.synthesis_best()
        return int(max(p.pw[i], self.pw + 1))

    @property
    def past_loads(self) -> bool:
        """Whether the best setting loads synthesis past what the log shows."""
        return self.loads[1] + (self.best_pw - self.pw) > self.load.seen["synth"][1] * 1.1 + 0.5

    def to_dict(self) -> dict:
        """The JSON form: the state, the model and the figures at the best setting."""
        p = self.point
        b = p.best()
        out = {
            "state": self.state,
            "load_model": self.load.describe(),
            "loads_seen": [round(self.loads[0], 2), round(self.loads[1], 2)],
            "pw": self.pw,
            "best_pw": self.best_pw,
            "gain": round(self.gain, 4),
            "synth_ms_at_best": round(float(p.synth_ms[b]), 1),
            "synthesis_floor_gain": round(max(0.0, p.synthesis_gain), 4),
            "settle_pw": self.settle_pw if self.state == "unknown" or self.past_loads else None,
        }
        if self.other is not None:
            out["gain_if_slowing"] = round(max(0.0, self.other.gain), 4)
            out["slowing_per_thread"] = UNSHOWN_SLOPE
        return out


@per_session
def own_load(session: Session) -> tuple[LoadFit, Sample]:
    """The load model ``session``'s own log shows, and what it was fitted on (once per
    session; a long session on FIT_ROWS of its middle partitions)."""
    rows = None
    n = len(session.partitions)
    if n > FIT_ROWS:
        start = np.asarray(session.partitions["synth_start"], dtype=np.float64)
        order = np.argsort(np.where(np.isfinite(start), start, np.inf), kind="stable")
        known = int(np.isfinite(start).sum())
        lo = max(0, (known - FIT_ROWS) // 2)
        rows = np.sort(order[lo : lo + FIT_ROWS])
    smp = sample(session, "this log", session.facts.cpus, rows)
    return fit([smp]), smp


def headroom(session: Session, f: Floors) -> Headroom | None:
    """What more synthesis concurrency gains on ``session`` whose floors (in a range, or
    the whole run) are ``f``; None where the floors have no synthesis or the log no
    synthesis its load fit could read."""
    if not math.isfinite(f.synthesis_s) or f.pw < 1 or not math.isfinite(f.values()[f.bound]):
        return None
    load, smp = own_load(session)
    if "synth" not in load.seen or not len(smp.stages.get("synth", ((), ()))[1]):
        return None
    c = load.contention
    pws = np.arange(f.pw, max(HORIZON * f.pw, f.pw + 2) + 1)
    point = play(f, smp, c, pws)
    loads = smp.mean_load("synth")
    seen = (float(np.percentile(loads, 2)), float(np.percentile(loads, 98)))
    # Synthesis slowing is shown where the fit keeps a synthesis slope, or where the log's
    # syntheses ran past the point where the machine time-shares (stated or fitted).
    shared = c.cores is not None and seen[1] > c.cores
    slows = bool(point.synth_ms[-1] > point.synth_ms[0] * (1 + 1e-6))
    if (load.shown.get("synth", False) and c.synth > 0) or shared:
        state, other = "slows", None
    elif load.shown.get("synth", False) and not slows:
        state, other = "keeps", None
    else:
        state = "unknown"
        other = play(f, smp, replace(c, synth=max(c.synth, UNSHOWN_SLOPE)), pws)
    return Headroom(f.pw, load, state, seen, point, other)


def play(f: Floors, smp: Sample, c: Contention, pws: np.ndarray) -> Played:
    """The floors at ``pws`` slots when every stage of ``smp`` runs beside that many more
    syntheses under ``c`` (module docstring)."""
    d = pws - f.pw
    r = {st: _slowed(smp, st, c, d) for st in ("synth", "prep", "kernel", "post")}
    synth_ms = f.means_ms.get("synth", math.nan) * r["synth"]
    synthesis = f.synthesis_s * r["synth"] * f.pw / pws
    kernel = f.kernel_s * r["kernel"]
    m = f.means_ms
    if f.upper_bound or not all(math.isfinite(m.get(k, math.nan)) for k in ("prep", "post")):
        worker = f.worker_s * r["kernel"]  # the call's CPU work is not told apart
    else:
        call = m["prep"] * r["prep"] + m["kernel"] * r["kernel"] + m["post"] * r["post"]
        per_call = m["prep"] + m["kernel"] + m["post"]
        worker = f.worker_s * call / per_call if per_call > 0 else np.full(len(d), f.worker_s)
    arrival = np.full(len(d), f.arrival_s)
    table = np.stack([kernel, worker, synthesis, arrival])
    table = np.where(np.isfinite(table), table, -np.inf)
    return Played(pws, table.max(axis=0), synthesis, synth_ms)


def _slowed(smp: Sample, stage: str, c: Contention, d: np.ndarray) -> np.ndarray:
    """Per ``d``: the mean duration of ``stage`` with ``d`` busy threads more beside it,
    as a multiple of its measured mean (1 where the log shows none of it)."""
    if stage not in smp.stages or not len(smp.stages[stage][1]):
        return np.ones(len(d))
    table, _, _ = smp.stages[stage]
    cls = "synth" if stage == "synth" else "kernel" if stage == "kernel" else "cpu"
    width = table.shape[1]
    busy = np.arange(width + int(d.max()) + 1)
    fb = np.asarray(c.factor(cls, busy), dtype=np.float64)
    spent = table.sum(axis=0)  # ms spent at each load, all stages together
    total = spent.sum()
    if total <= 0:
        return np.ones(len(d))
    b = np.arange(width)
    return np.array([(spent * fb[b + k] / fb[b]).sum() / total for k in d.tolist()])


def words(h: Headroom, role: str) -> str:
    """What more synthesis concurrency does, in one sentence, for a verdict where the
    synthesis floor binds (``role`` "bound") or comes next (``role`` "next")."""
    p = h.point
    i = p.best() if role == "bound" else p.synthesis_best()
    at = int(p.pw[i])
    mean = f"mean synthesis {_s(p.synth_ms[0])} -> {_s(p.synth_ms[i])}"
    what = p.gain if role == "bound" else p.synthesis_gain
    target = "gains" if role == "bound" else "lowers the synthesis floor by"
    model = _synthesis_model(h.load.contention)
    if h.state == "slows":
        if what < NO_GAIN:
            return (
                "More synthesis concurrency does not help: this log's load "
                f"({model}) slows synthesis beside more of them as fast as they are added "
                f"(pw {h.pw + 1}: mean synthesis {_s(p.synth_ms[0])} -> {_s(p.synth_ms[1])})."
            )
        text = (
            f"More synthesis concurrency {target} at most {percent(what)}, at pw {at} "
            f"({mean}: this log's load, {model})"
        )
        if at < p.pw[-1]:
            text += ", no more past it"
        if h.past_loads:
            lo, hi = h.load.seen["synth"]
            text += (
                f"; that is past the {hi:.0f} busy threads beside its syntheses the log shows: "
                f"a run at pw {at} would settle it"
            )
        return text + "."
    o = h.other
    assert o is not None
    j = o.best() if role == "bound" else o.synthesis_best()
    other = o.gain if role == "bound" else o.synthesis_gain
    cores = h.load.contention.cores
    keep = "keeps its speed beside more of them" + (
        f" up to {cores:g} busy threads" if cores is not None else ""
    )
    lo, hi = (round(x) for x in h.loads)
    beside = f"{lo}-{hi}" if hi > lo else f"about {lo}"
    return (
        f"More synthesis concurrency {target} at most {percent(what)} (pw {at}) if "
        f"synthesis {keep}, which this log cannot tell (its syntheses all ran beside "
        f"{beside} busy threads); slowing {percent(UNSHOWN_SLOPE, 0)} per busy thread, "
        f"{percent(max(0.0, other))} (pw {int(o.pw[j])}, mean synthesis "
        f"{_s(o.synth_ms[0])} -> {_s(o.synth_ms[j])}); a run at pw {h.settle_pw} would "
        "settle it."
    )


def _synthesis_model(c: Contention) -> str:
    """What slows synthesis in ``c``, in words: 'synthesis +4.4 % per added busy thread,
    the machine time-sharing past 16'."""
    parts = []
    if c.synth > 0:
        parts.append(f"synthesis {percent(c.synth, signed=True)} per added busy thread")
    if c.cores is not None:
        parts.append(f"the machine time-sharing past {c.cores:g} busy threads")
    return ", ".join(parts) or "synthesis keeps its speed"


def remedy(h: Headroom | None, default: str) -> str:
    """The synthesis floor's 'relieved by' words: ``default`` unless the log's load says
    more synthesis concurrency helps less than the floor promises."""
    if h is None or h.state == "keeps":
        return default
    if h.state == "slows":
        if h.point.synthesis_gain < NO_GAIN:
            return "faster synthesis (more synthesis concurrency does not help: this log's load)"
        at = int(h.point.pw[h.point.synthesis_best()])
        return (
            f"faster synthesis, or more synthesis concurrency up to pw {at} "
            f"(floor -{percent(h.point.synthesis_gain)}, this log's load)"
        )
    return (
        "faster synthesis; more synthesis concurrency if synthesis keeps its speed beside "
        f"more (this log cannot tell: a run at pw {h.settle_pw} would)"
    )


def _s(ms: float) -> str:
    return f"{ms / 1000:.2f} s" if ms < 10_000 else f"{ms / 1000:.1f} s"
