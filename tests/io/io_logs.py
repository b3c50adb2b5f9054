"""Small valid cuzk logs built in code, for the reader tests."""

from __future__ import annotations

ESC = "\x1b"


def field(name: str, value: object) -> str:
    """A tracing field as the daemon writes it, wrapped in ANSI escapes."""
    return f"{ESC}[3m{name}{ESC}[0m{ESC}[2m={ESC}[0m{value}"


def daemon_start() -> str:
    return f"2026-02-19T01:00:00.000001Z {ESC}[32m INFO{ESC}[0m cuzk_daemon: cuzk-daemon starting"


def worker_started(worker: int, gpu: int) -> str:
    return (
        f"2026-02-19T01:00:00.001272Z {ESC}[32m INFO{ESC}[0m cuzk_core::engine: pipeline GPU "
        f"worker started {field('worker_id', worker)} {field('gpu', gpu)} {field('sub_id', worker)}"
    )


def cuzk_block(pre_lock: int, wait: int, total: int = 3746) -> list[str]:
    return [
        "CUZK_TIMING: prep_msm_ms=1695",
        f"CUZK_TIMING: pre_lock_cpu_ms={pre_lock} mutex_wait_ms={wait}",
        "CUZK_TIMING: gpu_tid=0 ntt_msm_h_ms=3117",
        "CUZK_TIMING: gpu_tid=0 barrier_wait_ms=0",
        "CUZK_TIMING: gpu_tid=0 batch_add_ms=640",
        f"CUZK_TIMING: gpu_tid=0 tail_msm_ms=125 gpu_total_ms={total}",
        f"CUZK_TIMING: mutex_held_ms={total + 1} total_start_fn_ms=7100",
        "CUZK_TIMING: b_g2_msm_ms=380 num_circuits=1",
    ]


def partition_lines(
    job: str, part: int, t: int, worker: int, queue: str = "GPU_QUEUE"
) -> list[str]:
    """The six TIMELINE lines of one partition, starting at offset ``t``."""
    return [
        f"TIMELINE,{t},SYNTH_START,{job},partition={part}",
        f"TIMELINE,{t + 100},SYNTH_END,{job},partition={part},synth_ms=100",
        f"TIMELINE,{t + 101},{queue},{job},partition={part}",
        f"TIMELINE,{t + 102},GPU_PICKUP,{job},worker={worker},partition={part}",
        f"TIMELINE,{t + 103},GPU_START,{job},worker={worker},partition={part}",
        f"TIMELINE,{t + 503},GPU_END,{job},worker={worker},partition={part},gpu_ms=400",
    ]


def simple_log(jobs: int = 2, parts: int = 3, t0: int = 10, noise: bool = True) -> list[str]:
    """A valid single-GPU, two-worker log: one line per list item."""
    lines = [daemon_start(), worker_started(0, 0), worker_started(1, 0)] if noise else []
    t = t0
    for j in range(jobs):
        for p in range(parts):
            lines += partition_lines(f"job-{j}", p, t, worker=p % 2)
            if noise:
                lines.append(
                    f"2026-02-19T01:00:01Z {ESC}[34mDEBUG{ESC}[0m cuzk_core: noise {j} {p}"
                )
            t += 600
    return lines


def write(path, lines: list[str], end: str = "\n") -> None:
    path.write_bytes((end.join(lines) + end).encode())


def use_python(monkeypatch) -> None:
    """Read with the pure-Python scanner for the rest of the test (the scanner is chosen
    once, at import: ``viewer.io.scanner.BACKEND``)."""
    from viewer.io import pure, scanner

    monkeypatch.setattr(scanner, "BACKEND", pure)


def small_pieces(monkeypatch, size: int, records: int | None = None) -> None:
    """Cut plain files into pieces of ``size`` bytes in either scanner, and parse at most
    ``records`` records at a time in the pure-Python one."""
    from viewer.io import pure

    monkeypatch.setattr(pure, "READ_BYTES", size)
    if records is not None:
        monkeypatch.setattr(pure, "BATCH_RECORDS", records)
    try:
        from viewer.io import compiled
    except ImportError:  # not built
        return
    monkeypatch.setattr(compiled, "PIECE_BYTES", size)
