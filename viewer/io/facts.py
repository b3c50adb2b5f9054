"""What a log's head states about the machine and the daemon's settings (no Qt).

Daemons and harnesses print their settings once, at start, on tracing lines:
``realpipe config pw=8 gw=2 ... cpus=16``.  The load model takes the machine's CPU
threads from ``cpus=`` (busy threads past it time-share).  Only the first ``HEAD_BYTES``
of the (decompressed) file are read: settings come first, and a big log costs nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from os import PathLike

from viewer.io.errors import LogError
from viewer.io.source import Source, log_path

HEAD_BYTES = 1 << 20
#: ``cpus=16`` on a line that is not a TIMELINE record (ANSI colour codes allowed around).
_CPUS = re.compile(rb"(?:^|[\s\x1b\[m;])cpus(?:\x1b\[[0-9;]*m)*=(?:\x1b\[[0-9;]*m)*(\d{1,6})\b")
MAX_CPUS = 1 << 16


@dataclass(frozen=True)
class Facts:
    """Settings a log states (None: not stated)."""

    cpus: int | None = None


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


def from_text(head: bytes) -> Facts:
    """``Facts`` of a log's first bytes."""
    cpus = None
    for line in head.splitlines():
        if b"TIMELINE," in line or b"CUZK_TIMING" in line:
            continue
        m = _CPUS.search(line)
        if m and 1 <= int(m.group(1)) <= MAX_CPUS:
            cpus = int(m.group(1))
            break
    return Facts(cpus=cpus)
