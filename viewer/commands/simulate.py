"""`python -m viewer simulate`: write a realistic synthetic cuzk daemon log."""

from __future__ import annotations

import argparse
import math
import sys
import time

from viewer.sim.model import KIND_SCALE, KINDS, SimConfig, simulate
from viewer.sim.writer import WriteOptions, write

EPILOG = """\
The model: `--pw` partition workers synthesize partitions on the CPU (porep-c2
jobs have `--partitions` of them, other kinds are one monolithic call); each
finished partition is queued for the GPUs (oldest job first); `--gw` GPU
workers per GPU take them; a call does CPU prep, waits for its GPU's kernel
mutex, runs the CUDA region (ntt_msm_h + batch_add + tail_msm), then b_g2_msm
and an epilogue. Durations are means in milliseconds for a porep-c2 partition
(other kinds scale them); each is drawn with `--jitter`. The same options
always write the same bytes.

examples:
  python -m viewer simulate -o run.log
  python -m viewer simulate --gw 1 --pw 20 --sectors 10 -o phase7.log
  python -m viewer simulate --kinds porep-c2=3,window-post=1,winning-post=2 -o mix.log
  python -m viewer simulate --events 1000000 --gpus 4 --noise 0.85 -o big.log
"""

#: SimConfig field -> (option group, help). The option is the field with dashes.
FIELDS: dict[str, tuple[str, str]] = {
    "sectors": ("workload", "jobs (proofs) to run"),
    "partitions": ("workload", "partitions (GPU calls) per porep-c2 proof"),
    "interval_ms": ("workload", "time between job arrivals; 0 = all queued at start"),
    "pw": ("pipeline", "partition (synthesis) workers"),
    "gw": ("pipeline", "GPU workers per GPU: 2 = Phase 8 interlock, 1 = Phase 7"),
    "gpus": ("pipeline", "GPUs"),
    "queue_cap": ("pipeline", "synthesized partitions that may wait for a GPU"),
    "seed": ("timing", "random seed"),
    "jitter": ("timing", "relative standard deviation of every duration (0.04 = 4 %%)"),
    "synth_ms": ("timing", "CPU synthesis of one partition"),
    "prep_ms": ("timing", "CPU prep (prep_msm) before the kernel mutex"),
    "kernel_ms": ("timing", "CUDA region, gpu_total_ms"),
    "b_g2_ms": ("timing", "b_g2_msm after the CUDA region"),
    "epilogue_ms": ("timing", "epilogue after b_g2_msm"),
    "assemble_ms": ("timing", "extra epilogue of a job's last call (proof assembly)"),
    "dispatch_ms": ("timing", "median of worker free or partition queued -> GPU_START"),
    "warmup_ms": ("timing", "extra CUDA time of the first call on each GPU"),
}
GROUPS = {
    "workload": "workload",
    "pipeline": "pipeline",
    "timing": "timing (durations in ms)",
    "format": "log format",
}


def _kinds(text: str) -> tuple[tuple[str, float], ...]:
    out = []
    for item in text.split(","):
        name, _, weight = item.partition("=")
        if name.strip() not in KIND_SCALE:
            raise argparse.ArgumentTypeError(f"unknown kind {name!r}; known: {', '.join(KINDS)}")
        out.append((name.strip(), float(weight or 1)))
    return tuple(out)


def _fraction(text: str) -> float:
    v = float(text)
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError("must be in [0, 1)")
    return v


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    d = SimConfig()
    p = sub.add_parser(
        name,
        help="write a realistic synthetic daemon log",
        description="Simulate the cuzk proving pipeline and write the log its daemon would.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="log file to write (.gz: gzip-compressed)",
    )
    g = {key: p.add_argument_group(title) for key, title in GROUPS.items()}
    g["workload"].add_argument(
        "--events",
        type=int,
        metavar="N",
        help="instead of --sectors: about N TIMELINE events (6 per call)",
    )
    g["workload"].add_argument(
        "--kinds",
        type=_kinds,
        default=d.kinds,
        metavar="K=W,...",
        help="proof kinds with weights, e.g. porep-c2=4,window-post=1 "
        f"(kinds: {', '.join(KINDS)}; default porep-c2)",
    )
    for field, (group, text) in FIELDS.items():
        default = getattr(d, field)
        g[group].add_argument(
            "--" + field.replace("_", "-"),
            type=float if isinstance(default, float) else int,
            default=default,
            metavar="MS" if field.endswith("_ms") else "REL" if field == "jitter" else "N",
            help=f"{text} (default {'as many as --pw' if default is None else f'{default:g}'})",
        )
    f = g["format"]
    f.add_argument(
        "--era",
        choices=("new", "old"),
        default="new",
        help="old: CHAN_SEND instead of GPU_QUEUE (default new)",
    )
    f.add_argument(
        "--no-cuzk-timing",
        action="store_true",
        help="no CUZK_TIMING lines: kernel time only as the gpu_ms upper bound",
    )
    f.add_argument(
        "--no-tracing",
        action="store_true",
        help="no Rust tracing lines at all, as if grepped for TIMELINE/CUZK_TIMING",
    )
    f.add_argument(
        "--journald",
        action="store_true",
        help="prefix lines as journalctl does: 'Feb 19 01:12:03 host cuzk-daemon[4242]: '",
    )
    f.add_argument("--crlf", action="store_true", help="CRLF line ends")
    f.add_argument(
        "--noise",
        type=_fraction,
        default=0.0,
        metavar="FRACTION",
        help="fraction of the file's bytes that are tracing noise, e.g. 0.85 (default 0)",
    )
    f.add_argument(
        "--disorder-ms",
        type=int,
        default=2,
        metavar="MS",
        help="TIMELINE lines may trail their event by up to this many ms (default 2)",
    )


def config_from(args: argparse.Namespace) -> SimConfig:
    """The SimConfig the options describe (raises ValueError on bad values)."""
    values = {field: getattr(args, field) for field in FIELDS}
    if args.events:
        weights = sum(w for _, w in args.kinds)
        calls = sum(w * (args.partitions if k == "porep-c2" else 1) for k, w in args.kinds)
        values["sectors"] = max(1, math.ceil(args.events * weights / (6 * calls)))
    return SimConfig(kinds=args.kinds, **values)


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    try:
        cfg = config_from(args)
    except ValueError as e:
        print(f"python -m viewer simulate: {e}", file=sys.stderr)
        return 2
    opts = WriteOptions(
        era=args.era,
        cuzk_timing=not args.no_cuzk_timing,
        tracing=not args.no_tracing,
        journald=args.journald,
        crlf=args.crlf,
        noise=args.noise,
        disorder_ms=args.disorder_ms,
        seed=args.seed,
    )
    sched = simulate(cfg)
    n = write(sched, args.output, opts)
    dt = time.perf_counter() - t0
    calls = len(sched.end)
    print(
        f"wrote {args.output}: {n / 1e6:.1f} MB, {cfg.sectors} jobs, {calls} GPU calls, "
        f"{6 * calls} TIMELINE events in {dt:.1f} s ({n / 1e6 / dt:.0f} MB/s)",
        file=sys.stderr,
    )
    return 0
