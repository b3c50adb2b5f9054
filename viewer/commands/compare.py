"""`python -m viewer compare A.log B.log`: two runs side by side, each figure with its change."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from viewer.commands.common import (
    SESSION,
    add_format_arguments,
    add_range_argument,
    add_workers_argument,
    fail,
    load,
    named,
    write_stdout,
)

ALIGN_HELP = """\
alignment (--align): aligned time is ms after a point of each run:
  first-gpu      its first GPU_START (default)
  session        its first event
  completion:N   the completion (last GPU_END) of its N-th finished job
--range A:B is in aligned time and maps to each run's own TIMELINE offsets;
inside it the report's range rules apply (see `{prog} report --help`).

examples:
  {prog} compare phase7.log phase8.log --markdown --label-a "Phase 7" --label-b "Phase 8"
  {prog} compare run.log run.log --session-a 1 --session-b 2 --json
  {prog} compare a.log b.log --align completion:2 --range 0:120000
"""


def _alignment(text: str):
    from viewer.analysis.compare import Alignment

    try:
        return Alignment.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    p = sub.add_parser(
        name,
        help="compare two runs (two logs, or two sessions of one log) figure by figure",
        description="Compare run A with run B: s/proof, efficiency, idle, gaps, kernel time, "
        "synthesis and queue wait side by side with their absolute and relative change, plus "
        "both verdicts.",
        epilog=named(ALIGN_HELP),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path_a", metavar="A.log", help="run A (the baseline)")
    p.add_argument("path_b", metavar="B.log", help="run B (compared against A)")
    p.add_argument(
        "--session-a", type=SESSION, default=None, metavar="N", help="daemon run of A, from 1"
    )
    p.add_argument(
        "--session-b", type=SESSION, default=None, metavar="N", help="daemon run of B, from 1"
    )
    p.add_argument("--label-a", default=None, metavar="TEXT", help="name of A (file stem)")
    p.add_argument("--label-b", default=None, metavar="TEXT", help="name of B (file stem)")
    p.add_argument(
        "--align",
        type=_alignment,
        default="first-gpu",
        metavar="MODE",
        help="first-gpu, session or completion:N (default first-gpu)",
    )
    add_range_argument(p, help="aligned window (ms)")
    add_format_arguments(p, "cuzk-timeline-compare/1", "a headline and Markdown tables")
    add_workers_argument(p, help="GPU workers per GPU when a log has no 'GPU worker started' lines")


def run(args: argparse.Namespace) -> int:
    from viewer.analysis.compare import alignment_offset
    from viewer.export.compare import (
        compare_dict,
        compare_markdown,
        compare_runs,
        compare_text,
        run_label,
    )
    from viewer.export.format import json_parts
    from viewer.model.timeline import display_path, printable

    path_a, path_b = Path(args.path_a), Path(args.path_b)
    timeline_a = load("compare", path_a, args.workers_per_gpu)
    if timeline_a is None:
        return 2
    if path_a.resolve() == path_b.resolve():
        timeline_b = timeline_a
    else:
        timeline_b = load("compare", path_b, args.workers_per_gpu)
        if timeline_b is None:
            return 2
    try:
        session_a = timeline_a.numbered(args.session_a)
        session_b = timeline_b.numbered(args.session_b)
    except ValueError as exc:  # no such session
        return fail("compare", exc)
    for path, session in ((path_a, session_a), (path_b, session_b)):
        try:  # which log lacks the alignment point (a log with fewer completions than N)
            alignment_offset(session, args.align)
        except ValueError as exc:
            return fail("compare", f"{display_path(path)}: {exc}")
    label_a, label_b = run_label(path_a), run_label(path_b)
    if label_a == label_b:  # one log, two sessions (or two files of the same name)
        label_a, label_b = (
            f"{label_a} session {session_a.number}",
            f"{label_b} session {session_b.number}",
        )
    label_a = printable(args.label_a) if args.label_a else label_a
    label_b = printable(args.label_b) if args.label_b else label_b
    try:
        res = compare_runs(
            session_a,
            session_b,
            label_a=label_a,
            label_b=label_b,
            alignment=args.align,
            rng=args.range,
            source_a=str(path_a),
            source_b=str(path_b),
        )
    except ValueError as exc:  # nothing to align on
        return fail("compare", exc)
    if args.json:
        # Compact, as the report's (`jq .` pretty-prints), its tables a chunk of rows at a
        # time: two logs of 150 000 jobs, indented, were 166 MB of text and 1.7 GB at once.
        for part in json_parts(compare_dict(res, rows=True)):
            write_stdout(part)
        return 0
    sys.stdout.write(compare_markdown(res) if args.markdown else compare_text(res))
    return 0
