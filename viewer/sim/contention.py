"""How a stage slows down beside others: the load model of the simulator and the replay.

On a real machine a partition's synthesis, a GPU worker's CPU prep and post-processing
(and, through memory bandwidth, maybe the kernels) run slower the more CPU-heavy work
runs beside them (domain.md "Load").  The model is processor sharing: every running
stage holds an amount of *work* (its duration when it runs alone) and does it at the rate
``1 / f(L)``, where ``L`` is the number of busy CPU threads at that moment (syntheses
running plus GPU workers in a call and not waiting for the kernel mutex: in prep, in the
kernel region, whose host thread spins on the GPU as CUDA does by default, or in post) and

    f(L) = (1 + a * (min(L, cores) - 1)) * max(1, L / cores)

``a`` is the slowdown each added busy thread costs (memory bandwidth, caches), one per
stage class; past ``cores`` busy threads the machine time-shares them.  ``f(1) = 1``;
``a = 0`` and no ``cores`` is no contention at all (today's fixed durations).  The kernel
runs on the GPU: it never time-shares the CPU, only its bandwidth term applies.

``cap`` bounds the load the bandwidth term sees (``f`` is flat beyond what the logs
showed, for the optimistic end of a band); ``cores`` at the most seen is the pessimistic
end (nothing beyond it adds throughput).

``waker`` is how a GPU worker's CPU work (class ``cpu``) shares the machine past the cores.
Processor sharing gives every busy thread ``cores / L`` of a CPU.  But the GPU workers'
threads sleep (the mutex, the GPU) and wake, and a thread that wakes when every CPU already
runs a synthesis shares one CPU with the threads on it: ``1 / (1 + (L - 1) / cores)`` of a
CPU, not ``cores / L`` (the real H200 runs of ``shared/real_h200`` show it: past the cores
their GPU workers' post-processing took 1, 2, 3 or 4 times its unloaded time, as many
syntheses as shared its CPU, where processor sharing gives every call 2.1 times).  The
time-sharing term of class ``cpu`` is ``(1 - waker) * L / cores + waker * (1 + (L - 1) /
cores)`` past the cores; 0 is processor sharing, 1 every call sharing a CPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: The stage classes a load model knows: synthesis, a GPU worker's CPU work (prep and
#: post-processing), the CUDA kernels.
CLASSES = ("synth", "cpu", "kernel")


@dataclass(frozen=True)
class Contention:
    """One machine's load model (see the module docstring); all slopes >= 0."""

    synth: float = 0.0
    cpu: float = 0.0
    kernel: float = 0.0
    cores: float | None = None  # None: never time-shared
    cap: float | None = None  # the bandwidth term stops growing past this load
    waker: float = 0.0  # class cpu past the cores: 0 processor sharing, 1 a CPU shared

    def __post_init__(self) -> None:
        for name in CLASSES:
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and 0.0 <= v <= 10.0):
                raise ValueError(f"contention {name} must be a number from 0 to 10, not {v!r}")
        if not (isinstance(self.waker, int | float) and 0.0 <= self.waker <= 1.0):
            raise ValueError(f"contention waker must be from 0 to 1, not {self.waker!r}")
        for name in ("cores", "cap"):
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and 1.0 <= v <= 1e6):
                raise ValueError(f"contention {name} must be from 1 to 1e6, not {v!r}")

    @property
    def active(self) -> bool:
        """Whether any stage's duration depends on the load."""
        return self.cores is not None or any(getattr(self, c) > 0 for c in CLASSES)

    def factor(self, cls: str, busy: float | np.ndarray) -> float | np.ndarray:
        """``f`` of stage class ``cls`` at ``busy`` busy CPU threads (scalar or array)."""
        out = self.factors(cls, busy)
        return float(out) if np.ndim(out) == 0 else out

    def factors(
        self,
        cls: str,
        busy: float | np.ndarray,
        slopes: np.ndarray | None = None,
        wakers: np.ndarray | None = None,
    ) -> np.ndarray:
        """``factor`` at each of ``busy`` (a 1-d array) for each of ``slopes`` (the slope of
        ``cls``) or ``wakers`` in place of this model's, as columns: (len(busy), k).  The
        same arithmetic on each element as ``factor`` of the model with that value, to the
        bit (the load fit tries a grid of them: a model and a ``factor`` call each was a
        third of its time)."""
        x = np.maximum(np.asarray(busy, dtype=np.float64), 1.0)
        grid = slopes is not None or wakers is not None
        col = (lambda v: v[:, None]) if grid else (lambda v: v)
        a = getattr(self, cls) if slopes is None else np.asarray(slopes, np.float64)[None, :]
        seen = np.minimum(x, self.cores) if self.cores is not None else x
        if self.cap is not None:
            seen = np.minimum(seen, self.cap)
        out = 1.0 + a * col(seen - 1.0)
        if cls != "kernel" and self.cores is not None:
            shared = np.maximum(1.0, x / self.cores)
            waker = self.waker if wakers is None else np.asarray(wakers, np.float64)[None, :]
            if cls == "cpu" and np.any(np.asarray(waker) > 0):
                woken = np.where(x > self.cores, 1.0 + (x - 1.0) / self.cores, 1.0)
                shared = (1.0 - waker) * col(shared) + waker * col(woken)
            else:
                shared = col(shared)
            out = out * shared
        if grid and np.shape(out)[1:] == (1,):  # a grid over what this class does not read
            out = np.repeat(out, len(slopes if slopes is not None else wakers), 1)
        return out

    def describe(self) -> str:
        """``synthesis +4.1 %, CPU prep/post +2.0 % per busy thread, time-shared past 16``."""
        parts = [
            f"{label} {100 * getattr(self, c):+.1f} %"
            for c, label in (("synth", "synthesis"), ("cpu", "CPU prep/post"), ("kernel", "kernel"))
            if getattr(self, c) > 0
        ]
        text = (", ".join(parts) + " per added busy thread") if parts else "no slowdown with load"
        if self.cores is not None:
            text += f", time-shared past {self.cores:g} busy threads"
            if self.waker > 0:
                text += ", the GPU workers' CPU work sharing a CPU with the threads on it" + (
                    f" ({100 * self.waker:.0f} % of calls)" if self.waker < 1 else ""
                )
        return text


NONE = Contention()


#: The keys ``parse`` takes.
KEYS = (*CLASSES, "cores", "waker")


def parse(text: str) -> Contention:
    """``synth=0.05,cpu=0.03,kernel=0,cores=16,waker=1`` (the simulator's ``--contention``)."""
    values: dict[str, float] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in KEYS:
            raise ValueError(
                f"contention: {item!r} is not NAME=VALUE with NAME one of {', '.join(KEYS)}"
            )
        if key in values:
            raise ValueError(f"contention: {key} is given twice")
        try:
            values[key] = float(value)
        except ValueError:
            raise ValueError(f"contention: {key}={value!r} is not a number") from None
    return Contention(**values)
