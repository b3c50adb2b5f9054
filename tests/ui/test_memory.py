"""The C heap under the reader's threads (``viewer.heap``): what a background job frees goes
back to the system (glibc kept a load's ~90 MB of freed scan columns and temporaries in
its threads' arenas for the window's life), and what a thread frees the next one reuses."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from viewer import heap as memory
from viewer.ui import background
from viewer.ui.background import LatestTask

glibc_only = pytest.mark.skipif(
    memory._malloc_trim() is None, reason="malloc_trim is glibc's (Linux)"
)


def _resident() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def _free_in_a_thread(total: int) -> None:
    """Allocate ``total`` bytes in small blocks on a new thread (its own malloc arena) and
    free all but the last: the arena cannot shrink from its top, so its pages stay."""

    def work() -> None:
        blocks = [bytearray(32 << 10) for _ in range(total // (32 << 10))]
        keep = blocks[-1]
        del blocks
        work.kept = keep  # type: ignore[attr-defined]

    t = threading.Thread(target=work)
    t.start()
    t.join()


@glibc_only
def test_freed_pages_go_back_to_the_system() -> None:
    _free_in_a_thread(96 << 20)
    held = _resident()
    assert memory.release_free_memory()
    assert _resident() < held - (48 << 20)


def _clear_caches() -> None:
    for cached in (memory._libc, memory._malloc_trim, memory._mallopt):
        cached.cache_clear()


def test_elsewhere_it_does_nothing(monkeypatch) -> None:
    _clear_caches()
    monkeypatch.setattr(sys, "platform", "darwin")
    try:
        assert memory._malloc_trim() is None
        assert memory.release_free_memory() is False
        assert memory.one_arena() is False
        assert memory.reuse_big_blocks() is False
    finally:
        _clear_caches()


#: In a fresh interpreter: five blocks of 3 MB written whole, then freed, twenty times over
#: (a read's piece of columns and temporaries); prints the page faults they cost.
BIG_BLOCKS = """
import resource, sys
from viewer import heap
if sys.argv[1] == "reuse":
    assert heap.reuse_big_blocks()
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
before = faults()
for i in range(20):
    blocks = [bytearray(3 << 20) for _ in range(5)]
    del blocks
print(faults() - before)
"""


@glibc_only
def test_big_blocks_are_reused_not_mapped_afresh(monkeypatch) -> None:
    """Each block glibc maps on its own, or takes from a heap top it gave back, is faulted
    and zeroed page by page again; kept, the pages freed before serve the next (here
    62 000 faults, 4 000)."""
    for name in (*memory._THRESHOLD_SETTINGS, "GLIBC_TUNABLES"):
        monkeypatch.delenv(name, raising=False)

    def faults(mode: str) -> int:
        out = subprocess.run(
            [sys.executable, "-c", BIG_BLOCKS, mode], capture_output=True, text=True, check=True
        )
        return int(out.stdout)

    assert faults("reuse") * 3 < faults("mapped")


@pytest.mark.parametrize(
    "setting",
    [
        ("MALLOC_MMAP_THRESHOLD_", "65536"),
        ("MALLOC_TRIM_THRESHOLD_", "0"),
        ("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=65536"),
    ],
)
def test_a_chosen_threshold_is_kept(monkeypatch, setting) -> None:
    monkeypatch.setenv(*setting)
    assert memory.reuse_big_blocks() is False


def test_another_tunable_does_not_stop_the_thresholds(monkeypatch) -> None:
    """GLIBC_TUNABLES may set anything else (hardware caps, the tcache): only a threshold
    the user chose is kept."""
    for name in memory._THRESHOLD_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0")
    assert memory._threshold_chosen() is False
    monkeypatch.setenv(
        "GLIBC_TUNABLES", "glibc.malloc.tcache_count=0:glibc.malloc.trim_threshold=0"
    )
    assert memory._threshold_chosen() is True


#: In a fresh interpreter: a thread allocates 96 MB in small blocks and frees them, then
#: the main thread allocates as much; prints how much the process grew (MB).
REUSE = """
import sys, threading
from viewer import heap
if sys.argv[1] == "one":
    assert heap.one_arena()
def grown():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 >> 20
def work():
    blocks = [bytearray(32 << 10) for _ in range(3072)]
    work.kept = blocks[-1]
    del blocks
t = threading.Thread(target=work)
t.start()
t.join()
before = grown()
again = [bytearray(32 << 10) for _ in range(3072)]
print(grown() - before)
"""


@glibc_only
def test_with_one_arena_the_main_thread_reuses_what_a_thread_freed(monkeypatch) -> None:
    """The reader's case: its scanner threads free their pieces, the pairing on the main
    thread needs as much next.  With an arena per thread the process grows by all of it
    again; with one arena it reuses the pages."""
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)

    def grown(mode: str) -> int:
        out = subprocess.run(
            [sys.executable, "-c", REUSE, mode], capture_output=True, text=True, check=True
        )
        return int(out.stdout)

    assert grown("many") > 80  # the thread's arena keeps its 96 MB; the main one grows
    assert grown("one") < 16


def test_a_chosen_arena_count_is_kept(monkeypatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert memory.one_arena() is False


def test_every_background_job_hands_back_what_it_freed(qtbot, monkeypatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(background, "release_free_memory", lambda: calls.append("trim"))
    task = LatestTask(name="test")
    outcomes: list[object] = []
    task.ready.connect(lambda _ctx, result: outcomes.append(result))
    task.failed.connect(lambda _ctx, message: outcomes.append(message))
    task.request("ok", lambda: 1)
    qtbot.waitUntil(lambda: len(outcomes) == 1, timeout=5000)
    task.request("bad", lambda: 1 / 0)  # a failed job frees memory too
    qtbot.waitUntil(lambda: len(outcomes) == 2, timeout=5000)
    assert calls == ["trim", "trim"]
    assert outcomes[0] == 1 and "ZeroDivisionError" in outcomes[1]


def test_a_c_library_by_another_name_is_searched_for(monkeypatch) -> None:
    """Where ``libc.so.6`` does not load, ``find_library`` names the C library; where it
    names none, nothing is tuned."""
    import ctypes
    import ctypes.util

    real = ctypes.CDLL
    asked: list[str] = []

    def cdll(name, *args, **kwargs):
        asked.append(name)
        if name == "libc.so.6":
            raise OSError("not this one")
        return real("libc.so.6", *args, **kwargs)

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", cdll)
    _clear_caches()
    try:
        monkeypatch.setattr(ctypes.util, "find_library", lambda name: "libc-other.so")
        assert memory._libc() is not None and asked == ["libc.so.6", "libc-other.so"]
        _clear_caches()
        monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
        assert memory._libc() is None
        assert memory.one_arena() is False and memory.release_free_memory() is False
    finally:
        _clear_caches()
