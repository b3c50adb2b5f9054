"""`python -m viewer report LOG`: every figure of the analysis, for a terminal, Markdown or JSON."""

from __future__ import annotations

import argparse
import sys

from viewer.commands.common import (
    RANGE_HELP,
    add_log_argument,
    add_range_argument,
    add_session_argument,
    add_workers_argument,
    fail,
    load,
)


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    p = sub.add_parser(
        name,
        help="kernel time, idle gaps, sector transitions, s/proof and a verdict",
        description="Analyse a cuzk log: CUDA kernel time, GPU efficiency, idle gaps, sector "
        "transitions, theoretical vs measured s/proof, and whether the run is GPU-bound.",
        epilog=RANGE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_log_argument(p)
    add_session_argument(p)
    add_range_argument(p)
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON (schema cuzk-timeline-report/1)")
    fmt.add_argument("--markdown", action="store_true", help="Markdown tables")
    add_workers_argument(p)


def run(args: argparse.Namespace) -> int:
    from viewer.export.format import to_json
    from viewer.export.report import report_dict, report_markdown, report_text

    timeline = load("report", args.path, args.workers_per_gpu)
    if timeline is None:
        return 2
    try:
        if args.json:
            # Compact (`jq .` pretty-prints): a 10^6-event report has 10^5 gap objects.
            text = to_json(report_dict(timeline, args.session, args.range)) + "\n"
        elif args.markdown:
            text = report_markdown(timeline, args.session, args.range)
        else:
            text = report_text(timeline, args.session, args.range)
    except ValueError as exc:  # e.g. no such session
        return fail("report", exc)
    sys.stdout.write(text)
    return 0
