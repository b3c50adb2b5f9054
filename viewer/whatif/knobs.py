"""What a what-if changes: the pipeline's shape and the durations of a call's stages.

Every knob is optional; a knob left as None keeps what the log measured.  A
duration is either set to a mean (``kernel_ms=1824``: each partition's kernel is
scaled by 1824 / the measured mean, so the spread is kept) or scaled
(``kernel_scale=0.5``), never both.  ``check`` says, in words a person can act
on, what is wrong with a knob; nothing runs with a bad one.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from viewer.sim.budget import MAX_BUDGET_GIB

#: The durations a what-if can change, with what each is in the log.
STAGES = {
    "kernel": "CUDA kernel time per call (gpu_total_ms)",
    "prep": "CPU prep per call before the kernel mutex (pre_lock_cpu_ms)",
    "post": "kernel end -> GPU_END per call (b_g2_msm + epilogue)",
    "synth": "synthesis per partition (SYNTH_START -> SYNTH_END)",
}
#: Bounds of the knobs: beyond them a what-if says nothing useful (or cannot run).
MAX_WORKERS = 64  # gw: GPU workers per GPU
MAX_GPUS = 64
MAX_PW = 1024  # synthesis slots
MAX_QUEUE = 1 << 20
MAX_JOBS = 100_000  # a closed loop's proofs (cuzk-bench -c)
MAX_MS = 3_600_000.0  # a stage's mean: one hour
MIN_SCALE, MAX_SCALE = 0.01, 100.0


class KnobError(ValueError):
    """A knob out of range; the message names it and the range it must lie in."""


@dataclass(frozen=True)
class Knobs:
    """The changes of one what-if (None = as measured)."""

    gw: int | None = None
    pw: int | None = None
    gpus: int | None = None
    queue_cap: int | None = None
    #: A closed loop, as cuzk-bench's -c and -j: ``jobs`` proofs submitted, at most
    #: ``concurrency`` in flight (each job takes the durations of the log's job of its
    #: number modulo the log's jobs).
    jobs: int | None = None
    concurrency: int | None = None
    kernel_ms: float | None = None
    kernel_scale: float | None = None
    prep_ms: float | None = None
    prep_scale: float | None = None
    post_ms: float | None = None
    post_scale: float | None = None
    synth_ms: float | None = None
    synth_scale: float | None = None
    #: A budget-gated daemon's memory budget (``viewer.sim.budget``), GiB: the synthesis
    #: workers it sizes (unless ``pw`` is set) and the budget gate played with it.
    budget_gib: float | None = None

    def __post_init__(self) -> None:
        check(self)

    def changed(self) -> dict[str, float | int]:
        """The knobs that are set, by name (the what-if's JSON ``knobs``)."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    def stage(self, name: str) -> tuple[float | None, float | None]:
        """(mean to set, scale) of one of ``STAGES``."""
        return getattr(self, f"{name}_ms"), getattr(self, f"{name}_scale")

    def describe(self, measured: dict[str, float | int | None] | None = None) -> str:
        """The knobs in a few words, from the ``measured`` values when given (the pipeline's
        shape by knob name, stage means by stage name): "gw 2 -> 1, kernel 3746 -> 1824 ms"."""
        was = measured or {}
        out = []
        for k, v in self.changed().items():
            stage = k.rsplit("_", 1)[0]
            before = was.get(stage if k.endswith(("_ms", "_scale")) else k)
            if k.endswith("_scale"):
                after = f" ({before:.0f} -> {before * v:.0f} ms)" if before is not None else ""
                out.append(f"{stage} x{v:g}{after}")
            elif k.endswith("_ms"):
                out.append(f"{stage} {'' if before is None else f'{before:.0f} -> '}{v:g} ms")
            elif k == "budget_gib":
                out.append(f"budget {'' if before is None else f'{before:g} -> '}{v:g} GiB")
            elif before == v:
                out.append(f"{k.replace('_', ' ')} {v} (as measured)")
            else:
                name = k.replace("_", " ")
                out.append(f"{name} {'' if before is None else f'{before} -> '}{v}")
        return ", ".join(out) or "no change"


def check(k: Knobs) -> None:
    """Raise ``KnobError`` for the first knob out of its range."""
    for name, top in (("gw", MAX_WORKERS), ("pw", MAX_PW), ("gpus", MAX_GPUS)):
        _count(name, getattr(k, name), top)
    _count("queue_cap", k.queue_cap, MAX_QUEUE)
    _count("jobs", k.jobs, MAX_JOBS)
    _count("concurrency", k.concurrency, MAX_JOBS)
    if k.budget_gib is not None:
        _real("budget_gib", k.budget_gib, 0.0, MAX_BUDGET_GIB, "GiB", low_open=True)
    for stage in STAGES:
        mean, scale = k.stage(stage)
        if mean is not None and scale is not None:
            raise KnobError(f"--{stage}-ms and --{stage}-scale both set: give one of them")
        if mean is not None:
            _real(f"{stage}_ms", mean, 0.0, MAX_MS, "ms", low_open=True)
        if scale is not None:
            _real(f"{stage}_scale", scale, MIN_SCALE, MAX_SCALE, "x")


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _count(name: str, value: int | None, top: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        raise KnobError(f"{_option(name)} must be a whole number from 1 to {top}, not {value!r}")


def _real(name: str, value: float, lo: float, hi: float, unit: str, low_open: bool = False) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        ok = (lo < value if low_open else lo <= value) and value <= hi
    if not ok:
        side = f"more than {lo:g}" if low_open else f"at least {lo:g}"
        raise KnobError(
            f"{_option(name)} must be a finite number {side} and at most {hi:g} {unit}, "
            f"not {value!r}"
        )


KNOB_NAMES = tuple(f.name for f in fields(Knobs))
