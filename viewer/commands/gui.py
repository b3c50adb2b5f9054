"""`python -m viewer open LOG...`: the desktop viewer."""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    p = sub.add_parser(
        name,
        help="open logs in the viewer window (the default command)",
        description="Open cuzk daemon logs in the swimlane viewer.",
    )
    p.add_argument("paths", nargs="*", metavar="LOG", help="log files (.log, .gz, .zst)")
    p.add_argument(
        "--workers-per-gpu",
        type=int,
        default=None,
        metavar="N",
        help="GPU workers per GPU when the log has no 'GPU worker started' lines",
    )


def run(args: argparse.Namespace) -> int:
    try:
        from viewer.ui.app import run_app
    except ImportError:
        print(
            "The viewer window is not built yet; use `python -m viewer info LOG` "
            "or `python -m viewer report LOG` meanwhile.",
            file=sys.stderr,
        )
        return 2
    return run_app(args.paths, workers_per_gpu=args.workers_per_gpu)
