"""`python -m viewer report LOG...`: every figure of the analysis, for a terminal, Markdown or
JSON; several logs (a fleet of provers) in parallel, one record per session."""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import sys

from viewer.commands.common import (
    RANGE_HELP,
    add_format_arguments,
    add_range_argument,
    add_session_argument,
    add_workers_argument,
    fail,
    load,
    session_position,
    write_stdout,
)

FLEET_HELP = """\
several logs: `report LOG... --json-lines` (or --table, the default for several logs)
reads them in parallel, one process per log over all cores (--jobs N), and prints one
record per session in the order given: s/proof, GPU efficiency, the binding floor,
cold start, skipped lines. Quoted globs are expanded ("logs/*.log.gz"). Every log is
independent, so past one machine any scheduler scales it unchanged (a cluster job
array, `xargs -P`): concatenate the JSON lines.
"""


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    p = sub.add_parser(
        name,
        help="kernel time, idle gaps, sector transitions, s/proof, floors and a verdict",
        description="Analyse a cuzk log: CUDA kernel time, GPU efficiency, idle gaps, sector "
        "transitions, theoretical vs measured s/proof, the four floors, and which one binds.",
        epilog=RANGE_HELP + "\n" + FLEET_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths", nargs="+", metavar="LOG", help="log files (plain, .gz or .zst), folders or globs"
    )
    add_session_argument(p)
    add_range_argument(p)
    fmt = add_format_arguments(p, "cuzk-timeline-report/1", "Markdown tables")
    fmt.add_argument(
        "--json-lines",
        action="store_true",
        help="one JSON line per session of every log (format cuzk-timeline-fleet/1)",
    )
    fmt.add_argument("--table", action="store_true", help="one table row per session")
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="logs read at once, or processes for the sessions of one log of many daemon "
        "runs (default: the CPU cores)",
    )
    add_workers_argument(p)


def run(args: argparse.Namespace) -> int:
    from viewer.export.fleet import expand

    notes: list[str] = []
    paths = expand(args.paths, notes)
    for note in notes:  # skipped links in a folder, logs reached twice
        print(f"report: {note}", file=sys.stderr)
    # A folder or a glob that named logs is a fleet, even of one; one path as given is not
    # (an empty folder stays itself, and reading it says what it is).
    named = len(args.paths) == 1 and len(paths) == 1 and paths[0] == args.paths[0]
    if args.json_lines or args.table or not named:
        return _fleet(args, paths)
    return _one(args, paths[0])


def _one(args: argparse.Namespace, path: str) -> int:
    if args.jobs is not None and not 1 <= args.jobs <= MAX_JOBS:
        return fail("report", f"--jobs must be a whole number from 1 to {MAX_JOBS}")
    # A report builds ~10^5 row objects and no reference cycles worth collecting: the
    # collector's passes over them (~35 ms of the 10^6-event log's report) are skipped.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _report(args, path)
    finally:
        if was_enabled:
            gc.enable()


def _report(args: argparse.Namespace, path: str) -> int:
    from viewer.export.report import report_json_parts, report_markdown_parts, report_text_parts

    timeline = load("report", path, args.workers_per_gpu)
    if timeline is None:
        return 2
    jobs = args.jobs or os.cpu_count() or 1  # a log of many daemon runs: sessions in parallel
    # Written a session at a time, as each is summarized: a log of thousands of daemon runs
    # starts printing at once and is never held whole (JSON: compact; `jq .` pretty-prints).
    render = report_json_parts if args.json else report_text_parts
    render = report_markdown_parts if args.markdown else render
    try:
        session = session_position(timeline, args.session)
        parts = render(timeline, session, args.range, jobs)
        first = list(itertools.islice(parts, 2))  # what cannot be reported says so first
    except ValueError as exc:  # e.g. no such session
        return fail("report", exc)
    for part in itertools.chain(first, parts):
        write_stdout(part)
    return 0


MAX_JOBS = 256


def _fleet(args: argparse.Namespace, paths: list[str]) -> int:
    from viewer.export.fleet import died_record, fleet_table, log_records
    from viewer.export.format import to_json
    from viewer.export.processes import process_map

    if args.json or args.markdown:
        return fail("report", "several logs: use --json-lines or --table")
    if args.range is not None:
        return fail("report", "--range needs one log (each log has its own clock)")
    if args.jobs is not None and not 1 <= args.jobs <= MAX_JOBS:
        return fail("report", f"--jobs must be a whole number from 1 to {MAX_JOBS}")
    jobs = min(args.jobs or os.cpu_count() or 1, len(paths))
    work = [(p, args.workers_per_gpu, args.session) for p in paths]
    failed = 0
    rows = []
    for records in process_map(log_records, work, jobs, died=lambda item: [died_record(*item)]):
        for r in records:
            if "error" in r:
                failed += 1
                print(f"report: {r['error']}", file=sys.stderr)
            if args.json_lines:
                sys.stdout.write(to_json(r) + "\n")
                sys.stdout.flush()  # a fleet takes a while: show each log as it is done
            else:
                rows.append(r)
    if not args.json_lines:
        sys.stdout.write(fleet_table(rows) + "\n")
    return 0 if not failed else 2 if failed == len(paths) else 1
