"""Command line: ``python -m viewer [LOG ...]`` opens the viewer; subcommands work headless."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from viewer.commands import compare, export, gui, info, report, simulate

SUBCOMMANDS = {
    "info": info,
    "report": report,
    "export": export,
    "compare": compare,
    "simulate": simulate,
    "open": gui,
}

DESCRIPTION = """\
cuzk Timeline Viewer: see where the GPU workers of a cuzk proving run were busy,
where the GPU sat idle and whether the run is GPU-bound.

  python -m viewer run.log             open logs in the viewer (same as `open`)
  python -m viewer info run.log        what the reader found: sessions, events, skipped lines
  python -m viewer report run.log      kernel time, gaps, transitions, s/proof, verdict
  python -m viewer export run.log --out t.json --format trace   Perfetto / chrome://tracing
  python -m viewer compare a.log b.log two runs side by side: every figure, delta, verdicts
  python -m viewer simulate -o x.log   write a realistic synthetic daemon log

Run `python -m viewer COMMAND --help` for the options of each command.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m viewer",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in SUBCOMMANDS.items():
        module.add_parser(sub, name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    # Bare paths (no subcommand) open the viewer, as a desktop app is expected to.
    if not args_in or (args_in[0] not in SUBCOMMANDS and args_in[0] not in ("-h", "--help")):
        args_in = ["open", *args_in]
    parser = build_parser()
    args = parser.parse_args(args_in)
    return int(SUBCOMMANDS[args.command].run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
