"""What a log's head states about the machine and the daemon's settings (no Qt).

Daemons and harnesses print their settings once, at start, on tracing lines (the message,
then ``field=value`` pairs, as tracing-subscriber's default format writes them, ANSI
colour codes allowed around the names):

- a harness's ``realpipe config pw=8 gw=2 ... kernel_scale=1.0 cpus=16``; the load model
  takes the machine's CPU threads from ``cpus=`` (busy threads past it time-share);
- a budget-gated daemon's ``memory budget initialized total_budget_gib=N``,
  ``initializing GPU workers num_gpus=G gpu_workers_per_device=W ...`` and ``starting
  pipeline: ... (budget-gated) ... max_partitions_in_budget=M effective_lookahead=L
  synth_worker_count=S`` (``viewer.sim.budget``: that line's ``num_gpus`` is the GPU
  workers, so it is not read);
- the simulator's ``partition workers started count=N`` (its pw).

Only the first daemon run's head is read: the lines before its first TIMELINE line or a
second ``cuzk-daemon starting``, within the first ``HEAD_BYTES`` of the (decompressed)
file.  A value out of its bounds (negative, NaN, 10^30) is not believed: it stays None.
"""

from __future__ import annotations

import math
import re
from dataclasses import fields
from os import PathLike

from viewer.io.errors import LogError
from viewer.io.source import Source, log_path
from viewer.model.facts import Facts

__all__ = ["HEAD_BYTES", "Facts", "facts", "from_text"]

HEAD_BYTES = 1 << 20
_ANSI = re.compile(rb"\x1b\[[0-9;]*m")
#: ``name=value`` after a space (the value up to the next space).
_FIELD = re.compile(rb"(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)=(\S{1,64})")
MAX_CPUS = 1 << 16
MAX_BUDGET_GIB = 1 << 20  # a pebibyte: past it a figure is a typo
#: Per field: the line it is read from (bytes in the line, ANSI codes removed), the field's
#: name there, and the values believed (whole numbers unless the bound is a float).
_READ: dict[str, tuple[bytes, bytes, tuple[float, float]]] = {
    "total_budget_gib": (b"memory budget initialized", b"total_budget_gib", (1, MAX_BUDGET_GIB)),
    "max_partitions_in_budget": (b"(budget-gated)", b"max_partitions_in_budget", (0, 1 << 20)),
    "effective_lookahead": (b"(budget-gated)", b"effective_lookahead", (1, 1 << 20)),
    "synth_worker_count": (b"(budget-gated)", b"synth_worker_count", (1, 1 << 16)),
    "num_gpus": (b"initializing GPU workers", b"num_gpus", (1, 1 << 12)),
    "gpu_workers_per_device": (b"initializing GPU workers", b"gpu_workers_per_device", (1, 1024)),
    "pw": (b"realpipe config", b"pw", (1, 1 << 16)),
    "gw": (b"realpipe config", b"gw", (1, 1024)),
    "kernel_scale": (b"realpipe config", b"kernel_scale", (1e-6, 1e6)),
}
#: Lines only a budget-gated daemon writes.
_GATED = (b"memory budget initialized", b"(budget-gated)")
_PW_STARTED = b"partition workers started"
_DAEMON = b"cuzk-daemon starting"


def facts(path: str | PathLike) -> Facts:
    """The settings stated in the head of the log at ``path`` (a log that cannot be read
    states nothing: its reader says why)."""
    try:
        with Source(log_path(path)) as src:
            head = b""
            for block in src._blocks(1 << 16):
                head += block
                if len(head) >= HEAD_BYTES:
                    break
    except (LogError, OSError, EOFError):
        return Facts()
    return from_text(head[:HEAD_BYTES])


def give(sessions: list, head: Facts, first: bool = True) -> None:
    """Give a log's ``sessions`` (in order) what its head states: the first (when ``first``:
    it is the run whose head that is) all of it, every other the machine's CPU threads.
    One host writes every run of a file; a daemon restarted with other settings states
    them in a head this does not read, so the other sessions get no settings."""
    others = Facts(cpus=head.cpus)  # one for all (frozen): 30 000 restarts made 30 000
    for i, session in enumerate(sessions):
        session.facts = head if first and i == 0 else others


def from_text(head: bytes) -> Facts:
    """``Facts`` of a log's first bytes (the first daemon run's head: module docstring)."""
    found: dict[str, int | float | bool] = {}
    started = False
    cut = head.find(b"TIMELINE,")
    if cut >= 0:
        head = head[:cut]  # what follows is the run's work, not its head
    for raw in head.splitlines():
        if b"TIMELINE," in raw:
            break
        if b"CUZK_TIMING" in raw:
            continue
        line = _ANSI.sub(b"", raw) if b"\x1b" in raw else raw
        if _DAEMON in line:
            if started:
                break  # a second daemon run: its settings are not the first run's
            started = True
        if b"=" not in line:
            continue
        values = dict(_FIELD.findall(line))
        if "cpus" not in found and b"cpus" in values:
            _keep(found, "cpus", values[b"cpus"], (1, MAX_CPUS))
        if any(g in line for g in _GATED):
            found["budget_gated"] = True
        if _PW_STARTED in line and b"count" in values:
            _keep(found, "pw", values[b"count"], _READ["pw"][2])
        for name, (marker, key, bounds) in _READ.items():
            if name not in found and key in values and marker in line:
                _keep(found, name, values[key], bounds)
    return Facts(**{f.name: found[f.name] for f in fields(Facts) if f.name in found})


def _keep(found: dict, name: str, text: bytes, bounds: tuple[float, float]) -> None:
    """``found[name]`` = ``text`` as a number, when it is one within ``bounds`` (whole
    unless the bounds are floats); else nothing."""
    lo, hi = bounds
    whole = isinstance(lo, int) and isinstance(hi, int)
    if whole and not text.isdigit():  # no sign, no "1_000", no "7.5"
        return
    try:
        value: int | float = int(text) if whole else float(text)
    except ValueError:
        return
    if (whole or math.isfinite(value)) and lo <= value <= hi and name not in found:
        found[name] = value
