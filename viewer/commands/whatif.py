"""`python -m viewer whatif LOG`: what another pipeline would have done with this run's work."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from viewer.commands.common import (
    SESSION,
    add_format_arguments,
    add_log_argument,
    add_memory_arguments,
    add_workers_argument,
    fail,
    load,
    memory_model,
    named,
    write_stdout,
)

if TYPE_CHECKING:
    from viewer.model import Session
    from viewer.whatif.load import LoadFit

EPILOG = """\
how: the session's measured job arrivals and per-partition durations (synthesis,
dispatch, CPU prep, kernel, post-processing) are played forward by the simulator's
engine with the knobs changed (domain.md, "Replay"). "replayed" is the replay with
nothing changed: how far it lies from "measured" is how far to trust "predicted".
--X-ms sets the mean of a stage (each partition scaled by X / its mean, keeping the
spread); --X-scale multiplies it. The floors (s/proof) say what binds each run:
kernel = mean kernel x P / GPUs, GPU worker = mean (prep + kernel + post) x P / workers,
synthesis = mean synthesis x P / syntheses at once, arrival = spacing of job arrivals.

examples:
  {prog} whatif run.log --kernel-scale 0.5          # kernels twice as fast
  {prog} whatif run.log --kernel-ms 1824 --prep-ms 1909 --post-ms 504 --gw 1
  {prog} whatif run.log --pw 20 --json
  {prog} whatif run.log --gpus 2 --out pred.log   # then: compare run.log pred.log
  {prog} whatif gated.log --budget-gib 260        # a budget-gated daemon's budget
"""


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    p = sub.add_parser(
        name,
        help="predict s/proof with other workers, GPUs or stage durations (replay)",
        description="Replay a session with other GPU workers, synthesis slots, GPUs or "
        "kernel / prep / post / synthesis times, and compare the predicted s/proof, GPU "
        "efficiency and floors with the measured run. Where the log cannot show what the "
        "replay takes (when jobs that waited for a synthesis slot arrived, a queue bound it "
        "never reached), the change is replayed at the other end too, and a note gives it.",
        epilog=named(EPILOG),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_log_argument(p)
    p.add_argument(
        "--session",
        type=SESSION,
        default=None,
        metavar="N",
        help="daemon run N, counted from 1 as `info` lists them (default: the one with "
        "the most GPU calls)",
    )
    shape = p.add_argument_group("pipeline (default: as measured)")
    shape.add_argument("--gw", type=int, metavar="N", help="GPU workers per GPU")
    shape.add_argument("--pw", type=int, metavar="N", help="partition (synthesis) workers")
    shape.add_argument("--gpus", type=int, metavar="N", help="GPUs (one shared queue)")
    shape.add_argument("--queue-cap", type=int, metavar="N", help="partitions the queue holds")
    shape.add_argument(
        "--budget-gib",
        type=float,
        metavar="GIB",
        help="a budget-gated daemon's memory budget: the synthesis workers it sizes from it "
        "(budget / 14 GiB, at most its max_parallel_synthesis, at least 2; --pw, when given, "
        "sets them) and a partition's synthesis waits for room for its 14 GiB beside SRS and "
        "PCE (--baseline-gib). A budget-gated log is replayed with its own budget",
    )
    loop = p.add_argument_group(
        "closed loop (as cuzk-bench -c / -j; default: the log's own arrivals)"
    )
    loop.add_argument("--jobs", type=int, metavar="C", help="proofs submitted (cuzk-bench -c)")
    loop.add_argument(
        "--concurrency", type=int, metavar="J", help="proofs in flight at most (cuzk-bench -j)"
    )
    load = p.add_argument_group("load: how stages slow down beside one another")
    load.add_argument(
        "--calibrate",
        nargs="+",
        default=[],
        metavar="OTHER.log",
        help="logs of the same machine at other settings: the load model is fitted over "
        "them and LOG (default: LOG alone, which shows only its own range of load)",
    )
    times = p.add_argument_group("stage durations (default: as measured)")
    for stage, what in (
        ("kernel", "CUDA kernel time per call"),
        ("prep", "CPU prep per call (pre_lock_cpu_ms)"),
        ("post", "kernel end -> GPU_END per call"),
        ("synth", "synthesis per partition"),
    ):
        one = times.add_mutually_exclusive_group()
        one.add_argument(f"--{stage}-ms", type=float, metavar="X", help=f"mean {what}, ms")
        one.add_argument(f"--{stage}-scale", type=float, metavar="F", help=f"{what} x F")
    add_memory_arguments(p)
    add_format_arguments(p, "cuzk-timeline-whatif/1")
    p.add_argument(
        "--out",
        metavar="PRED.log",
        help="also write the predicted run as a daemon log (open it, or compare it with LOG)",
    )
    add_workers_argument(p)


KNOB_OPTIONS = (
    "gw",
    "pw",
    "gpus",
    "queue_cap",
    "budget_gib",
    "jobs",
    "concurrency",
    *(f"{s}_{k}" for s in ("kernel", "prep", "post", "synth") for k in ("ms", "scale")),
)


def run(args: argparse.Namespace) -> int:
    from viewer.analysis.floors import no_floors
    from viewer.export.files import OutputRefused, open_output
    from viewer.export.format import display_path, json_bytes
    from viewer.export.whatif import whatif_dict, whatif_markdown, whatif_text
    from viewer.sim.writer import WriteOptions, write_stream
    from viewer.whatif import KnobError, Knobs, what_if

    try:
        knobs = Knobs(**{k: getattr(args, k) for k in KNOB_OPTIONS})
        memory = memory_model(args)
    except (KnobError, ValueError) as exc:
        return fail("whatif", exc)
    timeline = load("whatif", args.path, args.workers_per_gpu)
    if timeline is None:
        return 2
    try:
        session = timeline.numbered(args.session)
    except ValueError as exc:
        return fail("whatif", exc)
    no_call = no_floors(session, display_path(args.path))
    if no_call:  # nothing ran on a GPU: floors and a replay of 0 ms calls would be made up
        return fail("whatif", f"{no_call}, nothing to replay")
    load_fit = calibration(args, session, timeline.sessions[0].facts.cpus)
    if load_fit is None:
        return 2
    # The command keeps no reference to the log: what_if lets its tables go once it has what
    # the replays need (``consume``), and the measured session it hands back has none.
    number, given = session.number, [session]
    del timeline, session
    try:
        w = what_if(given.pop(), knobs, load=load_fit, memory_model=memory, consume=True)
    except ValueError as exc:
        return fail("whatif", f"{display_path(args.path)}, session {number}: {exc}")
    session = w.measured.session
    if args.out is not None:
        try:
            with open_output(args.out, [args.path]) as fh:
                write_stream(w.schedule, fh, WriteOptions())
        except OutputRefused as exc:
            return fail("whatif", exc)
        except OSError as exc:
            return fail("whatif", f"cannot write {display_path(args.out)}: {exc}")
    if args.json:
        text = json_bytes(whatif_dict(w, args.path, session))
    elif args.markdown:
        text = whatif_markdown(w, args.path, session)
    else:
        text = whatif_text(w, args.path, session)
    write_stdout(text)
    return 0


def calibration(args: argparse.Namespace, session: Session, cpus: int | None) -> LoadFit | None:
    """The load model of LOG's session (its machine's ``cpus``, as its head states them)
    and the ``--calibrate`` logs (each log's session with the most GPU calls); None after
    saying why one cannot be read."""
    from viewer.export.format import display_path
    from viewer.io.paths import file_identity
    from viewer.whatif.load import fit, sample

    samples = [sample(session, display_path(args.path), cpus)]
    seen = {file_identity(args.path)}
    for other in args.calibrate:
        if file_identity(other) in seen:
            return _bad(f"{display_path(other)} is given twice (LOG and --calibrate together)")
        seen.add(file_identity(other))
        timeline = load("whatif", other, args.workers_per_gpu)
        if timeline is None:
            return None
        try:
            s = timeline.numbered(None)
        except ValueError as exc:
            return _bad(f"--calibrate {display_path(other)}: {exc}")
        samples.append(sample(s, display_path(other), timeline.sessions[0].facts.cpus))
    try:
        return fit(samples)
    except ValueError as exc:
        return _bad(f"--calibrate: {exc}")


def _bad(message: str) -> None:
    fail("whatif", message)
    return None
