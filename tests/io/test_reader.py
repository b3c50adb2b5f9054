"""open_log on small crafted inputs: one test per kind of thing real files do."""

from __future__ import annotations

import gzip
import math

import numpy as np
import pytest
import zstandard
from io_logs import (
    cuzk_block,
    daemon_start,
    partition_lines,
    simple_log,
    small_pieces,
    use_python,
    worker_started,
    write,
)

from viewer.io import LoadCancelled, LogError, open_log
from viewer.io.reader import scan_log
from viewer.model.timeline import KERNEL_SOURCE_GPU_MS, KERNEL_SOURCE_TIMING, PARTITION_COLUMNS


def load(tmp_path, lines, name="run.log", end="\n", **kw):
    path = tmp_path / name
    write(path, lines, end)
    return open_log(path, **kw)


def test_simple_log_pairs_calls(tmp_path):
    tl = load(tmp_path, simple_log(jobs=2, parts=3))
    (s,) = tl.sessions
    assert s.events == 36 and s.skipped == {}
    assert list(s.partitions.columns) == list(PARTITION_COLUMNS)
    assert len(s.partitions) == 6 and list(s.jobs["job_id"]) == ["job-0", "job-1"]
    row = s.partitions.row(0)
    assert (row["synth_start"], row["synth_end"], row["queued"], row["pickup"]) == (
        10,
        110,
        111,
        112,
    )
    assert (row["gpu_start"], row["gpu_end"], row["gpu_ms"], row["synth_ms"]) == (
        113,
        513,
        400,
        100,
    )
    assert s.gpus == {0: [0, 1]} and s.notes == []
    assert (s.start_ms, s.end_ms) == (10, 10 + 5 * 600 + 503)
    assert s.kernel_source == KERNEL_SOURCE_GPU_MS and s.open_intervals == 0


def test_journald_prefix_and_ansi(tmp_path):
    lines = [
        f"Feb 19 01:12:03 host cuzk-daemon[4242]: \x1b[2m{line}\x1b[0m"
        for line in partition_lines("j", 0, 5, 0)
    ]
    (s,) = load(tmp_path, lines).sessions
    assert s.events == 6 and s.partitions.row(0)["gpu_ms"] == 400


def test_crlf(tmp_path):
    (s,) = load(tmp_path, simple_log(), end="\r\n").sessions
    assert s.events == 36 and s.skipped == {}


def test_cut_last_line_is_skipped(tmp_path):
    lines = simple_log(jobs=1, parts=1, noise=False)
    lines[-1] = lines[-1][: lines[-1].index("partition") + 8]  # "...worker=0,partitio"
    (s,) = load(tmp_path, lines, end="").sessions
    assert s.events == 5 and s.skipped == {"malformed_timeline": 1}
    assert s.open_intervals == 1


def test_glued_lines(tmp_path):
    a, b = partition_lines("j", 0, 5, 0)[4:]
    (s,) = load(tmp_path, ["TIMELINE,1,SYNTH_START,j,partition=0", a + b]).sessions
    assert s.events == 3 and s.partitions.row(0)["gpu_end"] == 508


def test_records_of_both_kinds_glued_into_one_line(tmp_path):
    """Each TIMELINE, or CUZK_TIMING: starts a record: a torn write that glued a call's
    GPU_END, its b_g2 line and the next GPU_START loses none of them."""
    a = partition_lines("j", 0, 5, 0)
    b = partition_lines("j", 1, 600, 1)
    glued = a[5] + "CUZK_TIMING: b_g2_msm_ms=380 num_circuits=1" + b[4]
    # (kernels of 300 ms: a call of 400 ms holds them)
    lines = [*a[:5], *cuzk_block(5, 7, 300)[:-1], glued, *cuzk_block(6, 8, 300)[1:-1], b[5]]
    for pure in (False, True):
        with pytest.MonkeyPatch.context() as mp:
            if pure:
                use_python(mp)
            (s,) = load(tmp_path, lines).sessions
        assert s.events == 8 and s.skipped == {}, pure
        rows = s.partitions.to_pandas().set_index("partition")
        assert rows.loc[0, "gpu_end"] == 508 and rows.loc[0, "b_g2_msm_ms"] == 380
        assert rows.loc[1, "gpu_start"] == 703 and rows.loc[1, "kernel_ms"] == 300


def test_torn_line_glued_to_the_next(tmp_path):
    a, b = partition_lines("j", 0, 5, 0)[4:]
    (s,) = load(tmp_path, [a[:20] + b]).sessions
    assert s.events == 1 and s.skipped == {"malformed_timeline": 1}


def test_binary_junk(tmp_path):
    path = tmp_path / "junk.log"
    good = "\n".join(simple_log(jobs=1, parts=2)).encode()
    path.write_bytes(b"\x00\xff\xfe garbage\n" + good + b"\nTIMELINE,99,GPU_\x00\x01\x02\n")
    (s,) = open_log(path).sessions
    assert s.events == 12 and s.skipped == {"binary": 1}


def test_few_ms_out_of_order_is_one_session(tmp_path):
    lines = simple_log(jobs=2, parts=3, noise=False)
    lines[3], lines[4] = lines[4], lines[3]
    lines.insert(10, "TIMELINE,2,GPU_QUEUE,late,partition=0")  # not a restart: one event
    tl = load(tmp_path, lines)
    assert len(tl.sessions) == 1


def test_daemon_restart_line_starts_a_session(tmp_path):
    run = simple_log(jobs=1, parts=2)
    tl = load(tmp_path, run + run)
    assert [s.events for s in tl.sessions] == [12, 12]
    assert [s.gpus for s in tl.sessions] == [{0: [0, 1]}] * 2


def test_offsets_restarting_near_zero_start_a_session(tmp_path):
    run = simple_log(jobs=2, parts=3, t0=10, noise=False)
    tl = load(tmp_path, run + simple_log(jobs=1, parts=2, t0=3, noise=False))
    assert [s.events for s in tl.sessions] == [36, 12]
    assert tl.sessions[1].start_ms == 3


def test_gpu_start_without_end_is_open(tmp_path):
    lines = simple_log(jobs=1, parts=2, noise=False)[:-1]
    (s,) = load(tmp_path, lines).sessions
    last = s.partitions.row(-1)
    assert last["gpu_open"] and math.isnan(last["gpu_end"]) and s.open_intervals == 1


@pytest.mark.parametrize("kind", ["gz", "zst", "gz-renamed"])
def test_compressed(tmp_path, kind):
    data = ("\n".join(simple_log()) + "\n").encode()
    if kind.startswith("gz"):
        blob = gzip.compress(data)
    else:
        blob = zstandard.ZstdCompressor().compress(data)
    path = tmp_path / ("run.log" if kind == "gz-renamed" else f"run.log.{kind}")
    path.write_bytes(blob)
    (s,) = open_log(path).sessions
    assert s.events == 36


def test_truncated_gzip_keeps_what_was_read(tmp_path):
    data = ("\n".join(simple_log(jobs=40)) + "\n").encode()
    blob = gzip.compress(data)
    path = tmp_path / "cut.log.gz"
    path.write_bytes(blob[: len(blob) * 2 // 3])
    (s,) = open_log(path).sessions
    assert 0 < s.events < 40 * 18 and any("cut short" in n for n in s.notes)


def test_grepped_timeline_only(tmp_path):
    lines = simple_log(jobs=1, parts=4, noise=False)
    (s,) = load(tmp_path, lines).sessions
    assert s.gpus == {0: [0, 1]} and "GPU 0" in s.notes[0]
    (s,) = load(tmp_path, lines, workers_per_gpu=1).sessions
    assert s.gpus == {0: [0], 1: [1]} and "worker // 1" in s.notes[0]
    assert set(s.partitions["gpu"]) == {0, 1}


def test_chan_send_era_fills_queued(tmp_path):
    lines = partition_lines("j", 0, 5, 0, queue="CHAN_SEND")
    (s,) = load(tmp_path, lines).sessions
    assert s.partitions.row(0)["queued"] == 106


def test_monolithic_job(tmp_path):
    lines = [
        "TIMELINE,1,SYNTH_START,post-1,kind=window-post",
        "TIMELINE,50,SYNTH_END,post-1,synth_ms=49",
        "TIMELINE,51,GPU_QUEUE,post-1,monolithic",
        "TIMELINE,52,GPU_PICKUP,post-1,worker=1",
        "TIMELINE,53,GPU_START,post-1,worker=1",
        "TIMELINE,90,GPU_END,post-1,worker=1,gpu_ms=37",
        *partition_lines("sector", 0, 100, 0),
    ]
    (s,) = load(tmp_path, lines).sessions
    assert s.events == 12
    mono = s.partitions[s.partitions["partition"] == -1].row(0)
    assert (mono["queued"], mono["gpu_ms"], mono["worker"], mono["synth_ms"]) == (51, 37, 1, 49)
    jobs = s.jobs.to_pandas().set_index("job_id")
    assert jobs.loc["post-1", "kind"] == "window-post" and jobs.loc["post-1", "monolithic"]
    assert jobs.loc["sector", "kind"] is None and not jobs.loc["sector", "monolithic"]


def test_detail_in_any_key_order_with_extra_keys(tmp_path):
    lines = [
        "TIMELINE,5,GPU_START,j,partition=2,worker=1,extra=x",
        "TIMELINE,9,GPU_END,j,gpu_ms=4,partition=2,worker=1",
    ]
    (s,) = load(tmp_path, lines).sessions
    row = s.partitions.row(0)
    assert (row["partition"], row["worker"], row["gpu_ms"], row["gpu_end"]) == (2, 1, 4, 9)


def test_skip_reasons(tmp_path):
    lines = [
        *partition_lines("j", 0, 5, 0),
        "TIMELINE,7,GPU_WAT,j,partition=0",
        "TIMELINE,8,GPU_END,j,worker=0,partition=x",
        "TIMELINE,8,GPU_END,j,worker=0,partition=0,gpu_ms=401",
        "TIMELINE,9x,GPU_END,j,worker=0,partition=0",
        "CUZK_TIMING: gpu_tid=0 ntt_msm_h_ms=3117",
        "CUZK_TIMING: pre_lock_cpu_ms=oops",
    ]
    (s,) = load(tmp_path, lines).sessions
    assert s.events == 6
    assert s.skipped == {
        "unknown_event": 1,
        "bad_number": 2,
        "duplicate_event": 1,
        "orphan_cuzk_timing": 1,
        "malformed_cuzk_timing": 1,
    }
    assert s.partitions.row(0)["gpu_ms"] == 400  # the first GPU_END wins


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"just some text\nno events\n", "no TIMELINE lines found; expected a cuzk daemon log"),
        (bytes(range(256)) * 50, "binary data"),
        (b"TIMELINE,1,NOPE\nTIMELINE,x\n", "2 TIMELINE lines found but none could be read"),
    ],
)
def test_not_a_log(tmp_path, content, message):
    path = tmp_path / "run.log"
    path.write_bytes(content)
    with pytest.raises(LogError, match=message) as info:
        open_log(path)
    assert "run.log" in str(info.value)


def test_missing_and_directory(tmp_path):
    with pytest.raises(LogError, match="no such file"):
        open_log(tmp_path / "nope.log")
    with pytest.raises(LogError, match="directory"):
        open_log(tmp_path)


def test_read_only_file(tmp_path):
    path = tmp_path / "ro.log"
    write(path, simple_log())
    path.chmod(0o444)
    before = path.read_bytes()
    assert open_log(path).events == 36
    assert path.read_bytes() == before


def test_progress_and_cancel(tmp_path, monkeypatch, scanner):
    small_pieces(monkeypatch, 512)
    path = tmp_path / "run.log"
    write(path, simple_log(jobs=20))
    seen: list[tuple[int, int]] = []
    tl = open_log(path, progress=lambda d, t: seen.append((d, t)))
    assert tl.events == 20 * 18
    assert len(seen) > 5 and seen[-1] == (path.stat().st_size,) * 2
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:], strict=False))
    calls = iter(range(100))
    with pytest.raises(LoadCancelled):
        open_log(path, cancel=lambda: next(calls) >= 3)


def test_small_chunks_give_the_same_result(tmp_path, monkeypatch, scanner):
    path = tmp_path / "run.log"
    lines = simple_log(jobs=5, parts=4)
    write(path, lines)
    whole = open_log(path).sessions[0].partitions
    monkeypatch.setattr("viewer.io.source.CHUNK_BYTES", 97)
    small_pieces(monkeypatch, 97)
    pieces = open_log(path).sessions[0].partitions
    assert whole.equals(pieces)


def cuzk_log(gpus: int = 1) -> list[str]:
    """Two workers per GPU; each GPU_START followed by its block once the lock is taken."""
    lines = [daemon_start()] + [worker_started(w, w // 2) for w in range(2 * gpus)]
    t = 100
    for p in range(4):
        for g in range(gpus):
            w = 2 * g + p % 2
            lines += partition_lines(f"j{g}", p, t, w)[:5]
            lines += cuzk_block(pre_lock=10 + p, wait=5 * g, total=200 + p)
            lines.append(partition_lines(f"j{g}", p, t, w)[5])
        t += 600
    return lines


def test_cuzk_timing_single_gpu(tmp_path):
    (s,) = load(tmp_path, cuzk_log()).sessions
    assert s.kernel_source == KERNEL_SOURCE_TIMING and s.skipped == {} and s.notes == []
    parts = s.partitions.sort_by("partition")
    np.testing.assert_array_equal(parts["kernel_ms"], [200, 201, 202, 203])
    np.testing.assert_array_equal(parts["kernel_start"], parts["gpu_start"] + [10, 11, 12, 13])
    assert (parts["ntt_msm_h_ms"] == 3117).all() and (parts["tail_msm_ms"] == 125).all()


def test_cuzk_timing_fifo_for_two_open_calls(tmp_path):
    a = partition_lines("j", 0, 100, 0)
    b = partition_lines("j", 1, 110, 1)
    lines = [*a[:5], *b[:5], *cuzk_block(50, 0, 300), a[5], *cuzk_block(1, 60, 301), b[5]]
    (s,) = load(tmp_path, lines).sessions
    parts = s.partitions.sort_by("partition")
    assert list(parts["kernel_ms"]) == [300, 301]
    assert list(parts["kernel_start"]) == [203 + 50, 213 + 61]


def test_cuzk_timing_multi_gpu_is_flagged(tmp_path):
    (s,) = load(tmp_path, cuzk_log(gpus=2)).sessions
    assert s.gpus == {0: [0, 1], 1: [2, 3]}
    assert np.isfinite(s.partitions["kernel_ms"]).all()
    assert any("best effort" in n for n in s.notes)
    assert s.partitions["kernel_ms"].sum() == 2 * (200 + 201 + 202 + 203)


def test_cuzk_blocks_belong_to_their_session(tmp_path):
    run = cuzk_log()
    tl = load(tmp_path, run + run)
    assert [np.isfinite(s.partitions["kernel_ms"]).sum() for s in tl.sessions] == [4, 4]


@pytest.mark.parametrize("kind", ["gz", "zst"])
def test_concatenated_members(tmp_path, kind):
    run = ("\n".join(simple_log(jobs=1, parts=2)) + "\n").encode()
    pack = gzip.compress if kind == "gz" else zstandard.ZstdCompressor().compress
    path = tmp_path / f"rotated.{kind}"
    path.write_bytes(pack(run) + pack(run))
    assert [s.events for s in open_log(path).sessions] == [12, 12]


def test_end_reads_only_the_first_bytes(tmp_path):
    lines = simple_log(jobs=2, parts=3)
    path = tmp_path / "growing.log"
    write(path, lines)
    data = path.read_bytes()
    assert scan_log(path).consumed == len(data)
    cut = data.rfind(b"\n", 0, data.index(b"job-1")) + 1  # job-1's first line starts here
    assert scan_log(path, end=cut).consumed == cut
    head = open_log(path, end=cut)
    assert list(head.sessions[0].jobs["job_id"]) == ["job-0"] and head.events == 18
    assert scan_log(path, end=len(data) + 100).consumed == len(data)
    with pytest.raises(LogError):
        open_log(path, end=0)


def test_end_is_ignored_for_compressed_files(tmp_path):
    data = "\n".join(simple_log(jobs=2, parts=3)).encode() + b"\n"
    path = tmp_path / "run.log.gz"
    path.write_bytes(gzip.compress(data))
    tl = open_log(path, end=10)
    assert tl.events == 36 and scan_log(path, end=10).consumed == path.stat().st_size


def test_end_progress_counts_to_end(tmp_path):
    path = tmp_path / "run.log"
    write(path, simple_log(jobs=2, parts=3))
    seen = []
    open_log(path, end=900, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (900, 900)


def test_a_wild_partition_number_does_not_blow_up_the_pairing(tmp_path):
    """One damaged partition=5000000 among ordinary lines: the pairing hashes instead of
    building a (job x partition) table (that was ~1 GB here), and the calls are kept."""
    import resource

    from viewer.io import pairing

    path = tmp_path / "run.log"
    lines = simple_log(jobs=3)
    write(path, lines)
    want = open_log(path).sessions[0].partitions
    write(path, [*lines, "TIMELINE,99,GPU_QUEUE,job-0,partition=5000000"])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    got = open_log(path).sessions[0].partitions
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB
    assert got[got["partition"] < 100].equals(want)
    assert pairing._dense(np.array([0, 1, 2]), np.array([0, 1, 5000000]))[0] is None


def two_gpu_log(runs: int, repeat_on_other_gpu: bool) -> list[str]:
    """``runs`` daemon runs of two calls on GPU 0 whose acquires both precede either's
    kernel lines (grouped one way on one GPU, another on several), a repeated event, and
    maybe a repeated GPU_START naming GPU 1's worker (a duplicate: the run stays on one)."""
    lines = []
    for r in range(runs):
        calls = [partition_lines(f"job-{r}", p, 10 + 10 * p, worker=0) for p in range(2)]
        block = [cuzk_block(10 + p, 5) for p in range(2)]
        lines += [daemon_start(), worker_started(0, 0), worker_started(1, 1)]
        lines += calls[0][:5] + calls[1][:5]
        lines += block[0][:2] + block[1][:2]
        lines += block[0][2:] + block[1][2:] + [calls[0][5], calls[1][5]]
        lines.append(calls[1][4])  # a repeated event: counted, not paired twice
        if repeat_on_other_gpu:
            lines.append(calls[0][4].replace("worker=0", "worker=1"))
    return lines


@pytest.mark.parametrize("python", [False, True], ids=["compiled", "python"])
@pytest.mark.parametrize("repeat_on_other_gpu", [False, True])
@pytest.mark.parametrize("runs", [1, 3])
def test_sessions_read_a_line_at_a_time_are_those_of_the_whole_scan(
    tmp_path, monkeypatch, runs, repeat_on_other_gpu, python
):
    """``open_log`` reads its sessions a piece at a time and lets each go; cut into pieces
    of a line (every event's session, call and block found across pieces), the sessions
    are those of a scan kept whole.  A scan kept whole (follow mode) stays whole and gives
    the same sessions again."""
    from viewer.io import assemble, compiled, pure

    path = tmp_path / "run.log"
    write(path, two_gpu_log(runs, repeat_on_other_gpu))
    if python:
        use_python(monkeypatch)
    kept = scan_log(path)
    want = kept.sessions()
    assert len(kept.batch.seq) > 0 and len(kept.batch.cuzk.seq) > 0  # stays whole
    again = kept.sessions()
    assert [s.partitions.equals(w.partitions) for s, w in zip(again, want, strict=True)] == [
        True
    ] * runs
    monkeypatch.setattr(assemble, "PIECE_ROWS", 1)
    monkeypatch.setattr(compiled, "PIECE_BYTES", 1)  # a piece a line
    monkeypatch.setattr(pure, "READ_BYTES", 7)
    got = open_log(path).sessions
    assert len(got) == len(want) == runs
    for a, b in zip(got, want, strict=True):
        assert a.partitions.equals(b.partitions) and a.jobs.equals(b.jobs)
        assert (a.events, a.skipped, a.notes, a.kernel_blocks, a.ambiguous_blocks) == (
            b.events, b.skipped, b.notes, b.kernel_blocks, b.ambiguous_blocks
        )  # fmt: skip
        assert a.kernel_source == KERNEL_SOURCE_TIMING
        assert a.skipped["duplicate_event"] == 1 + repeat_on_other_gpu
        # One GPU: the region's lines go to the latest acquire, the second block's repeat
        assert a.skipped["orphan_cuzk_timing"] == 5


def test_a_long_glued_line_is_parsed_as_it_is_cut(tmp_path):
    """The pure-Python scanner hands a glued line's records to the parser every
    FLUSH_RECORDS records (a 50 MB line held 0.6 M records at once): with tiny batches,
    markers between lines, CUZK_TIMING records inside the glued lines and a daemon restart,
    the sessions are those the compiled scanner and unflushed parsing read."""
    from viewer.io import pure, records

    a = partition_lines("j", 0, 5, 0)
    b = partition_lines("k", 1, 600, 1)
    lines = [
        worker_started(0, 0),
        "".join(a[:5] + cuzk_block(5, 7)[:-1]) + a[5],
        worker_started(1, 0),
        daemon_start(),
        "junk " + "".join(b) + "".join(cuzk_block(6, 8)),
        *partition_lines("m", 0, 2000, 1),
    ]
    path = tmp_path / "run.log"
    write(path, lines)

    def read() -> list[tuple]:
        return [
            (s.partitions, s.skipped, s.events, s.notes, s.workers) for s in open_log(path).sessions
        ]

    compiled = read()
    with pytest.MonkeyPatch.context() as mp:
        use_python(mp)
        whole = read()
        mp.setattr(records, "FLUSH_RECORDS", 3)
        mp.setattr(pure, "BATCH_RECORDS", 4)
        parse_all, mid_line = pure._parse_all, []

        def watched(raw, jobs, out, *, whole=True):
            mid_line.append(not whole and len(raw.items) >= 4)
            return parse_all(raw, jobs, out, whole=whole)

        mp.setattr(pure, "_parse_all", watched)
        flushed = read()
    assert sum(mid_line) >= 3  # the glued lines were parsed while being cut
    assert len(compiled) == len(whole) == len(flushed) == 2
    for x, y, z in zip(compiled, whole, flushed, strict=True):
        assert x[0].equals(y[0]) and y[0].equals(z[0]) and x[4].equals(z[4])
        assert x[1:4] == y[1:4] == z[1:4]


def test_a_long_glued_line_is_held_once_while_it_is_read(tmp_path):
    """The pure-Python scanner reads a 12 MB line of glued records without holding it
    twice: its blocks grow one buffer in place (not joined from a list), no regex match
    copies the line whole, and the records are parsed a small batch at a time as they are
    cut (a batch of 100 000 took ~40 MB to parse).  Beside the line, peak traced memory
    stays under 16 MB (a parse batch and the read blocks, whatever the line's length): it
    was 60 MB here, and grew with the line.  The events read are those the compiled
    scanner reads."""
    import tracemalloc

    record = "TIMELINE,{},GPU_START,0b7c6a52-8e5f-4d2b-9a1c-3f2e1d0c9b8a,worker=0,partition=3"
    line = "".join(record.format(100000 + i // 7) for i in range(150_000))
    path = tmp_path / "glued.log"
    write(path, [line])
    size = path.stat().st_size
    compiled = open_log(path).sessions[0]
    with pytest.MonkeyPatch.context() as mp:
        use_python(mp)
        tracemalloc.start()
        try:
            pure = open_log(path).sessions[0]
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert size > 12e6 and peak - size < 16e6, (peak - size) / 1e6
    assert pure.partitions.equals(compiled.partitions)
    assert pure.skipped == compiled.skipped == {"duplicate_event": 149_999}


def test_an_error_while_reading_leaves_no_scan_thread_behind(tmp_path, monkeypatch):
    """The reader's threads scan pieces ahead of the one read; an error in reading one
    (out of memory, a bug) closes the scan: by the time ``open_log`` raises, no thread is
    left to read the file's descriptor, which the closed file gives back to the next one
    opened (a thread once read another file through it)."""
    import threading

    from viewer.io import assemble, compiled, scanner

    if not scanner.compiled():
        pytest.skip("the pure-Python scanner has no threads")
    path = tmp_path / "run.log"
    write(path, [line for r in range(200) for line in simple_log(jobs=3)])
    monkeypatch.setattr(compiled, "PIECE_BYTES", 2000)
    monkeypatch.setattr(compiled, "MIN_PIECE_BYTES", 2000)
    monkeypatch.setattr(compiled, "FIRST_PIECE_BYTES", 2000)

    def add(self, batch):
        raise MemoryError("the assembler ran out")

    monkeypatch.setattr(assemble.Assembler, "add", add)
    with pytest.raises(MemoryError):
        try:
            open_log(path)
        except MemoryError:  # the error still held, as a caller holding it would
            assert not [t for t in threading.enumerate() if t.name.startswith("cuzk-scan")]
            raise


@pytest.mark.parametrize("rows", [1, 3, 10, 1000])
def test_a_whole_scan_is_read_in_slices_of_events_with_their_lines(tmp_path, rows):
    """Follow mode keeps its scan whole and reads it in slices (``batch.slices``): every
    event, CUZK_TIMING line, skipped line, marker, kind and copy lands in one slice, in
    file order, each line with the events around it; the sessions are open_log's."""
    from viewer.io import assemble
    from viewer.io.batch import slices

    lines = two_gpu_log(2, True)
    lines.insert(1, "TIMELINE,oops")  # a skipped line
    lines.append(lines[-1])  # an exact copy
    path = tmp_path / "run.log"
    write(path, lines)
    whole = scan_log(path).batch
    parts = list(slices(whole, rows))
    for name in ("seq", "event", "offset"):
        joined = np.concatenate([getattr(p, name) for p in parts])
        assert joined.tolist() == getattr(whole, name).tolist()
    assert all(len(p.seq) <= rows for p in parts) and all(len(p.seq) for p in parts)
    for get in (
        lambda b: b.cuzk.seq.tolist(),
        lambda b: b.skipped_seq.tolist(),
        lambda b: [m[0] for m in b.markers],
        lambda b: [k[0] for k in b.kinds],
        lambda b: b.copy_seq.tolist(),
    ):
        assert [x for p in parts for x in get(p)] == get(whole)
    for p, nxt in zip(parts, parts[1:], strict=False):  # a line before the next slice's event
        assert all(s < nxt.seq[0] for s in p.cuzk.seq.tolist())
        assert all(s > p.seq[-1] for s in nxt.cuzk.seq[nxt.cuzk.seq < nxt.seq[0]].tolist())
    scan = scan_log(path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(assemble, "PIECE_ROWS", rows)
        got = scan.sessions()
    want = open_log(path).sessions
    assert [(s.events, s.skipped, s.kernel_blocks) for s in got] == [
        (s.events, s.skipped, s.kernel_blocks) for s in want
    ]
    assert all(a.partitions.equals(b.partitions) for a, b in zip(got, want, strict=True))
