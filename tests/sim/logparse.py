"""A tiny independent reader for the simulator's own logs (not the viewer's reader)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

TIMELINE = re.compile(r"TIMELINE,(\d+),([A-Z_]+),([^,\s]+),(\S*)")
KV = re.compile(r"(\w+)=(\d+)")
TIMING = re.compile(r"CUZK_TIMING: (.*)")


@dataclass
class Parsed:
    events: list[tuple[int, str, str, dict[str, int], str]] = field(default_factory=list)
    gpu_totals: list[int] = field(default_factory=list)
    lock_lines: int = 0


def parse(text: str) -> Parsed:
    """TIMELINE events (offset, event, job, numeric fields, raw detail) and kernel totals."""
    p = Parsed()
    for line in text.splitlines():
        m = TIMELINE.search(line)
        if m:
            detail = m.group(4)
            p.events.append((int(m.group(1)), m.group(2), m.group(3), _ints(detail), detail))
            continue
        m = TIMING.search(line)
        if m:
            kv = _ints(m.group(1))
            if "gpu_total_ms" in kv:
                p.gpu_totals.append(int(kv["gpu_total_ms"]))
            if "mutex_wait_ms" in kv:
                p.lock_lines += 1
    return p


def _ints(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in KV.findall(text)}
