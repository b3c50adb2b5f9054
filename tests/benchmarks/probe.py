"""Run one measurement in a fresh process and print it as JSON (peak memory is per process).

``python probe.py baseline|events|load PATH``
"""

from __future__ import annotations

import json
import resource
import sys
import time

import viewer.io  # noqa: F401 - the baseline includes the package and its imports
from viewer import heap
from viewer.io import LogError
from viewer.io.reader import open_log, scan_log

heap.one_arena()  # as the command line and the window do, before the reader's threads
heap.reuse_big_blocks()


def _held(timeline) -> int:
    """Bytes of the tables the Timeline keeps."""
    total = 0
    for s in timeline.sessions:
        for frame in (s.partitions, s.jobs, s.workers):
            total += frame.nbytes()
    return total


def _peak_rss() -> int:
    """Peak resident bytes of this process.  ``ru_maxrss`` survives ``exec`` on Linux, so a
    probe started by a big pytest process would report the parent's peak: read VmHWM."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main(mode: str, path: str) -> None:
    out: dict[str, float] = {}
    t = time.perf_counter()
    cpu = time.process_time()
    tl = None
    if mode == "events":
        out["events"] = scan_log(path).events
    elif mode == "load":
        try:
            tl = open_log(path)
        except LogError as exc:  # a hostile file may be refused: its cost still counts
            out["error"] = str(exc)
    out["seconds"] = time.perf_counter() - t  # the load alone, not the counting below
    out["cpu"] = time.process_time() - cpu  # the machine is shared: CPU time is steadier
    out["maxrss"] = _peak_rss()
    if tl is not None:
        out["events"] = tl.events
        out["held"] = _held(tl)
        out["calls"] = sum(len(s.partitions) for s in tl.sessions)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")
