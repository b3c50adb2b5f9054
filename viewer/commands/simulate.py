"""`python -m viewer simulate`: write a realistic synthetic cuzk daemon log."""

from __future__ import annotations

import argparse
import gzip
import math
import sys
import time
from pathlib import Path

from viewer.commands.common import Bound, named, prog
from viewer.export.files import open_output, resolve_output
from viewer.export.format import display_path
from viewer.io.sessions import RESTART_DROP_MS
from viewer.sim.budget import BASELINE_GIB, MAX_BUDGET_GIB, synth_workers
from viewer.sim.contention import parse as parse_contention
from viewer.sim.model import KIND_SCALE, KINDS, SimConfig, budget_gated, simulate
from viewer.sim.writer import WriteOptions, write_stream

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
  {prog} simulate -o run.log
  {prog} simulate --gw 1 --pw 20 --sectors 10 -o phase7.log
  {prog} simulate --kinds porep-c2=3,window-post=1,winning-post=2 -o mix.log
  {prog} simulate --events 1000000 --gpus 4 --noise 0.85 -o big.log
  {prog} simulate --budget-gib 200 --sectors 8 -o gated.log  # budget-gated daemon
"""

#: A stage duration in ms: up to an hour.
DURATION = Bound(0, 3_600_000, integer=False)
#: SimConfig field -> (option group, allowed values, help). The option is the field with dashes.
FIELDS: dict[str, tuple[str, Bound, str]] = {
    "sectors": ("workload", Bound(1, 100_000), "jobs (proofs) to run"),
    "partitions": ("workload", Bound(1, 1000), "partitions (GPU calls) per porep-c2 proof"),
    "interval_ms": (
        "workload",
        Bound(0, 86_400_000, integer=False),
        "time between job arrivals; 0 = all queued at start",
    ),
    "pw": ("pipeline", Bound(1, 1024), "partition (synthesis) workers"),
    "gw": ("pipeline", Bound(1, 64), "GPU workers per GPU: 2 = Phase 8 interlock, 1 = Phase 7"),
    "gpus": ("pipeline", Bound(1, 256), "GPUs"),
    "queue_cap": (
        "pipeline",
        Bound(1, 100_000),
        "synthesized partitions that may wait for a GPU",
    ),
    "seed": ("timing", Bound(0, 2**32 - 1), "random seed"),
    "jitter": (
        "timing",
        Bound(0, 0.3, integer=False),
        "relative standard deviation of every duration (0.04 = 4 %%)",
    ),
    "synth_ms": ("timing", DURATION, "CPU synthesis of one partition"),
    "prep_ms": ("timing", DURATION, "CPU prep (prep_msm) before the kernel mutex"),
    "kernel_ms": ("timing", DURATION, "CUDA region, gpu_total_ms"),
    "b_g2_ms": ("timing", DURATION, "b_g2_msm after the CUDA region"),
    "epilogue_ms": ("timing", DURATION, "epilogue after b_g2_msm"),
    "assemble_ms": ("timing", DURATION, "extra epilogue of a job's last call (proof assembly)"),
    "dispatch_ms": ("timing", DURATION, "median of worker free or partition queued -> GPU_START"),
    "warmup_ms": ("timing", DURATION, "extra CUDA time of the first call on each GPU"),
}
#: --events, and the TIMELINE events any run may have (6 per GPU call): with --noise at
#: most NOISE.hi the file stays under about 20 x 10^7 lines.
EVENTS = Bound(1, 10_000_000)
#: --noise: the fraction of the file's bytes that are noise; 0.95 makes the file 20x its
#: own lines (0.999999 would make it a million times).
NOISE = Bound(0, 0.95, integer=False)
#: --disorder-ms: lines trail their event by less than a drop readers take for a daemon
#: restart (``viewer.io.sessions.RESTART_DROP_MS``), or the log would read as many runs.
DISORDER = Bound(0, RESTART_DROP_MS - 1)
WEIGHT = Bound(0, 1000, integer=False)
#: --budget-gib and --baseline-gib: up to a pebibyte.
BUDGET = Bound(1e-3, MAX_BUDGET_GIB, integer=False)
BASELINE = Bound(0, MAX_BUDGET_GIB, integer=False)
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
        try:
            w = WEIGHT(weight or "1")
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"the weight of kind {name.strip()} {exc}") from None
        out.append((name.strip(), w))
    return tuple(out)


def _bounds(b: Bound) -> str:
    return f"{b.lo:.12g}-{b.hi:.12g}"


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    d = SimConfig()
    p = sub.add_parser(
        name,
        help="write a realistic synthetic daemon log",
        description="Simulate the cuzk proving pipeline and write the log its daemon would.",
        epilog=named(EPILOG),
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
        type=EVENTS,
        metavar="N",
        help=f"instead of --sectors: about N TIMELINE events (6 per call; {_bounds(EVENTS)})",
    )
    g["workload"].add_argument(
        "--kinds",
        type=_kinds,
        default=d.kinds,
        metavar="K=W,...",
        help="proof kinds with weights, e.g. porep-c2=4,window-post=1 "
        f"(kinds: {', '.join(KINDS)}; default porep-c2)",
    )
    g["workload"].add_argument(
        "--concurrency",
        type=Bound(1, 100_000),
        metavar="J",
        help="a closed loop, as cuzk-bench -j: at most J jobs in flight, the next submitted "
        "as one completes (default: jobs arrive every --interval-ms)",
    )
    g["timing"].add_argument(
        "--contention",
        type=_contention,
        default=d.contention,
        metavar="SPEC",
        help="stages slow down beside one another: synth=A,cpu=B,kernel=C,cores=N, each "
        "stage's rate 1 / ((1 + a (min(L, N) - 1)) max(1, L / N)) with L busy threads "
        "(syntheses and GPU workers in a call); waker=W (0-1): past N, a GPU worker's CPU "
        "work shares one CPU with the threads on it, max(1, L / N) becoming "
        "(1 - W) L / N + W (1 + (L - 1) / N); durations above are then each stage alone "
        "(default: none)",
    )
    g["pipeline"].add_argument(
        "--budget-gib",
        type=BUDGET,
        metavar="GIB",
        help="a budget-gated daemon, as upstream's current one: synthesis workers sized from "
        "this memory budget (budget / 14 GiB, at most 18, at least 2: engine.rs), and a "
        "partition starts synthesis only when the budget has room for its 14 GiB beside "
        "--baseline-gib; its lines say so in the log's head. Instead of --pw "
        f"({_bounds(BUDGET)}; default: no budget, --pw workers)",
    )
    g["pipeline"].add_argument(
        "--baseline-gib",
        type=BASELINE,
        metavar="GIB",
        help="with --budget-gib: budget SRS and PCE hold from the start "
        f"({_bounds(BASELINE)}, default {BASELINE_GIB:g})",
    )
    for field, (group, bound, text) in FIELDS.items():
        default = getattr(d, field)
        shown = "no bound" if default is None else f"{default:g}"
        g[group].add_argument(
            "--" + field.replace("_", "-"),
            type=bound,
            # --pw left out is told from --pw 10: a budget sizes the workers itself.
            default=None if field == "pw" else default,
            metavar="MS" if field.endswith("_ms") else "REL" if field == "jitter" else "N",
            help=f"{text} ({_bounds(bound)}, default {shown})",
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
        type=NOISE,
        default=0.0,
        metavar="FRACTION",
        help="fraction of the file's bytes that are tracing noise, e.g. 0.85 "
        f"({_bounds(NOISE)}, default 0)",
    )
    f.add_argument(
        "--disorder-ms",
        type=DISORDER,
        default=2,
        metavar="MS",
        help="TIMELINE lines may trail their event by up to this many ms; more would read "
        f"as a daemon restart ({_bounds(DISORDER)}, default 2)",
    )


def config_from(args: argparse.Namespace) -> SimConfig:
    """The SimConfig the options describe (raises ValueError on bad values, or on a run of
    more than ``EVENTS.hi`` TIMELINE events)."""
    values = {field: getattr(args, field) for field in FIELDS}
    for field, (_, bound, _) in FIELDS.items():  # for callers that bypass argparse
        bound.check("--" + field.replace("_", "-"), values[field])
    budget = getattr(args, "budget_gib", None)
    BUDGET.check("--budget-gib", budget)
    baseline = getattr(args, "baseline_gib", None)
    BASELINE.check("--baseline-gib", baseline)
    if baseline is not None and budget is None:
        raise ValueError("--baseline-gib is what SRS and PCE hold of --budget-gib: give both")
    baseline = SimConfig.baseline_gib if baseline is None else baseline
    if budget is not None and values["pw"] is not None:
        raise ValueError(
            f"--pw and --budget-gib: a budget-gated daemon sizes its synthesis workers from "
            f"the budget ({synth_workers(budget)} for {budget:g} GiB); leave out --pw"
        )
    if values["pw"] is None:
        values["pw"] = SimConfig.pw
    weights = sum(w for _, w in args.kinds)
    if not weights > 0:
        raise ValueError("--kinds: the weights add up to zero")
    calls = sum(w * (args.partitions if k == "porep-c2" else 1) for k, w in args.kinds) / weights
    if args.events:  # bounded by EVENTS itself
        values["sectors"] = max(1, math.ceil(args.events / (6 * calls)))
    elif (events := 6 * calls * values["sectors"]) > EVENTS.hi:
        raise ValueError(
            f"--sectors {values['sectors']} x --partitions {args.partitions} makes about "
            f"{events:.0f} TIMELINE events; a simulated run has at most {EVENTS.hi:.12g}"
        )
    extra = {}
    if getattr(args, "contention", None) is not None:
        extra["contention"] = args.contention
    if getattr(args, "concurrency", None) is not None:
        extra["concurrency"] = args.concurrency
    cfg = SimConfig(kinds=args.kinds, baseline_gib=baseline, **values, **extra)
    return cfg if budget is None else budget_gated(cfg, budget)


def _contention(text: str):  # noqa: ANN202 (argparse type)
    try:
        return parse_contention(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _write(sched, output: str, opts: WriteOptions) -> int:
    """Write the log through ``open_output`` (a regular file or nothing, replaced whole);
    ``.gz``: gzip-compressed, without a time stamp, so the same options give the same bytes."""
    with open_output(output) as fh:
        if not output.endswith(".gz"):
            return write_stream(sched, fh, opts)
        name = Path(output).name
        with gzip.GzipFile(filename=name, mode="wb", fileobj=fh, mtime=0) as gz:
            return write_stream(sched, gz, opts)


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    fail = f"{prog()} simulate: "
    try:
        cfg = config_from(args)
        resolve_output(args.output)
    except (ValueError, OSError) as e:
        print(f"{fail}{e}", file=sys.stderr)
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
    try:
        n = _write(sched, args.output, opts)
    except OSError as e:
        print(f"{fail}cannot write {display_path(args.output)}: {e.strerror or e}", file=sys.stderr)
        return 2
    dt = max(time.perf_counter() - t0, 1e-6)
    calls = len(sched.end)
    print(
        f"wrote {display_path(args.output)}: {n / 1e6:.1f} MB, {cfg.sectors} jobs, "
        f"{calls} GPU calls, {6 * calls} TIMELINE events in {dt:.1f} s ({n / 1e6 / dt:.0f} MB/s)",
        file=sys.stderr,
    )
    return 0
