"""`python -m viewer report`: not built yet."""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    p = sub.add_parser(name, help="(not built yet)")
    p.add_argument("rest", nargs="*")


def run(args: argparse.Namespace) -> int:
    print("python -m viewer report: not built yet", file=sys.stderr)
    return 2
