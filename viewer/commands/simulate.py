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
finished partition is queued for the GPUs; `--gw` GPU workers per GPU take
them; a call does CPU prep, waits for its GPU's kernel mutex, runs the CUDA
region (ntt_msm_h + batch_add + tail_msm), then b_g2_msm and an epilogue.
Durations are means in milliseconds; each is drawn with `--jitter` (relative
standard deviation). The same seed always writes the same file.

examples:
  python -m viewer simulate -o run.log
  python -m viewer simulate --gw 1 --pw 20 --sectors 10 -o phase7.log
  python -m viewer simulate --kinds porep-c2=3,window-post=1,winning-post=2 -o mix.log
  python -m viewer simulate --events 1000000 --gpus 4 --noise 0.9 -o big.log
"""


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
    w = p.add_argument_group("workload")
    w.add_argument(
        "--sectors",
        type=int,
        default=d.sectors,
        metavar="N",
        help=f"jobs (proofs) to run (default {d.sectors})",
    )
    w.add_argument(
        "--events",
        type=int,
        metavar="N",
        help="instead of --sectors: about N TIMELINE events (6 per GPU call)",
    )
    w.add_argument(
        "--kinds",
        type=_kinds,
        default=d.kinds,
        metavar="K=W,...",
        help="mix of proof kinds with weights, e.g. porep-c2=4,window-post=1 "
        f"(kinds: {', '.join(KINDS)}; default porep-c2 only)",
    )
    w.add_argument(
        "--partitions",
        type=int,
        default=d.partitions,
        metavar="N",
        help=f"partitions per porep-c2 proof (default {d.partitions})",
    )
    w.add_argument(
        "--interval-ms",
        type=float,
        default=d.interval_ms,
        metavar="MS",
        help="time between job arrivals (default 0: all queued at start)",
    )
    h = p.add_argument_group("pipeline")
    h.add_argument(
        "--pw",
        type=int,
        default=d.pw,
        metavar="N",
        help=f"partition (synthesis) workers (default {d.pw})",
    )
    h.add_argument(
        "--gw",
        type=int,
        default=d.gw,
        metavar="N",
        help=f"GPU workers per GPU; 2 = Phase 8 interlock, 1 = Phase 7 (default {d.gw})",
    )
    h.add_argument("--gpus", type=int, default=d.gpus, metavar="N", help=f"GPUs (default {d.gpus})")
    h.add_argument(
        "--queue-cap",
        type=int,
        metavar="N",
        help="partitions allowed to wait synthesized for a GPU (default = pw)",
    )
    t = p.add_argument_group("timing (ms, porep-c2 partition means; other kinds scale)")
    t.add_argument("--seed", type=int, default=d.seed, help=f"random seed (default {d.seed})")
    t.add_argument(
        "--jitter",
        type=float,
        default=d.jitter,
        metavar="REL",
        help=f"relative sd of every duration (default {d.jitter})",
    )
    for flag, field, what in (
        ("--synth-ms", "synth_ms", "CPU synthesis of one partition"),
        ("--prep-ms", "prep_ms", "CPU prep (prep_msm) before the kernel mutex"),
        ("--kernel-ms", "kernel_ms", "CUDA region gpu_total_ms"),
        ("--b-g2-ms", "b_g2_ms", "b_g2_msm after the kernel"),
        ("--assemble-ms", "assemble_ms", "extra epilogue of a job's last call"),
        ("--dispatch-ms", "dispatch_ms", "worker free/partition queued -> GPU_START"),
        ("--warmup-ms", "warmup_ms", "extra kernel time of the first call on a GPU"),
    ):
        t.add_argument(
            flag,
            type=float,
            default=getattr(d, field),
            metavar="MS",
            help=f"{what} (default {getattr(d, field):g})",
        )
    o = p.add_argument_group("log format")
    o.add_argument(
        "--era",
        choices=("new", "old"),
        default="new",
        help="old: CHAN_SEND instead of GPU_QUEUE (default new)",
    )
    o.add_argument(
        "--no-cuzk-timing",
        action="store_true",
        help="no CUZK_TIMING lines (kernel time only as the gpu_ms upper bound)",
    )
    o.add_argument(
        "--no-tracing",
        action="store_true",
        help="no Rust tracing lines at all (as if grepped for TIMELINE/CUZK_TIMING)",
    )
    o.add_argument(
        "--journald",
        action="store_true",
        help="prefix lines as journalctl does: 'Feb 19 01:12:03 host cuzk-daemon[4242]: '",
    )
    o.add_argument("--crlf", action="store_true", help="CRLF line ends")
    o.add_argument(
        "--noise",
        type=_fraction,
        default=0.0,
        metavar="FRACTION",
        help="fraction of the file's bytes that are tracing noise, e.g. 0.9 (default 0)",
    )
    o.add_argument(
        "--disorder-ms",
        type=int,
        default=2,
        metavar="MS",
        help="TIMELINE lines may trail their event by up to this (default 2)",
    )


def config_from(args: argparse.Namespace) -> SimConfig:
    """The SimConfig the options describe."""
    sectors = args.sectors
    if args.events:
        wsum = sum(w for _, w in args.kinds)
        calls = sum(w * (args.partitions if k == "porep-c2" else 1) for k, w in args.kinds) / wsum
        sectors = max(1, math.ceil(args.events / (6 * calls)))
    return SimConfig(
        sectors=sectors,
        partitions=args.partitions,
        pw=args.pw,
        gw=args.gw,
        gpus=args.gpus,
        kinds=args.kinds,
        seed=args.seed,
        jitter=args.jitter,
        synth_ms=args.synth_ms,
        prep_ms=args.prep_ms,
        kernel_ms=args.kernel_ms,
        b_g2_ms=args.b_g2_ms,
        assemble_ms=args.assemble_ms,
        warmup_ms=args.warmup_ms,
        dispatch_ms=args.dispatch_ms,
        queue_cap=args.queue_cap,
        interval_ms=args.interval_ms,
    )


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
    calls = int((sched.end >= 0).sum())
    print(
        f"wrote {args.output}: {n / 1e6:.1f} MB, {cfg.sectors} jobs, {calls} GPU calls, "
        f"{6 * calls} TIMELINE events in {dt:.1f} s ({n / 1e6 / dt:.0f} MB/s)",
        file=sys.stderr,
    )
    return 0
