"""Command line: ``python -m viewer [LOG ...]`` opens the viewer; subcommands work headless."""

from __future__ import annotations

import argparse
import codecs
import contextlib
import errno
import importlib
import os
import sys
import textwrap
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

# numpy's OpenBLAS starts a thread per core when numpy is imported, and each spins ~0.1 s
# of CPU before it sleeps: CPU the viewer never asks for (it does no float linear algebra)
# taken from the scanner's threads.  Set before anything imports numpy; a value the user
# set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from viewer import heap  # noqa: E402 - after the environment above

# Every thread allocates from one malloc arena: what the scanner's threads free, the
# pairing on the main thread reuses, and big blocks too (see ``viewer.heap``).  Before any
# thread starts.
heap.one_arena()
heap.reuse_big_blocks()

from viewer.commands.common import prog  # noqa: E402 - after the heap's settings

#: Command name -> module in ``viewer.commands`` (imported only when its parser is built).
SUBCOMMANDS = {
    "info": "info",
    "report": "report",
    "export": "export",
    "compare": "compare",
    "whatif": "whatif",
    "sweep": "sweep",
    "simulate": "simulate",
    "open": "gui",
}

DESCRIPTION = """\
cuzk Timeline Viewer: see where the GPU workers of a cuzk proving run were busy,
where the GPU sat idle and whether the run is GPU-bound.
"""
#: The top-level help's examples: the arguments after the program's name, what they do.
EXAMPLES = (
    ("run.log", "open logs in the viewer (same as `open`)"),
    ("info run.log", "what the reader found: sessions, events, skipped lines"),
    ("report run.log", "kernel time, gaps, transitions, s/proof, verdict"),
    ("export run.log --out t.json --format trace", "Perfetto / chrome://tracing"),
    ("compare a.log b.log", "two runs side by side: every figure, delta, verdicts"),
    (
        "whatif run.log --gw 1 --kernel-scale 0.5",
        "predict the run another pipeline would give (a replay), with its floors",
    ),
    (
        "sweep runs/*.log",
        "runs of one machine lined up by the knob they differ in: measured, predicted, "
        "memory, the best",
    ),
    ("simulate -o x.log", "write a realistic synthetic daemon log"),
)


def description(prog: str) -> str:
    """The top-level help's text, with its examples typed as ``prog``."""
    column = len(f"  {prog} ") + 21
    lines = []
    for args, words in EXAMPLES:
        command = f"  {prog} {args}"
        wrapped = textwrap.wrap(words, 90 - column)
        if len(command) < column:  # the words beside the command, else under it
            lines.append(command.ljust(column) + wrapped.pop(0))
        else:
            lines.append(command)
        lines += [" " * column + w for w in wrapped]
    run = f"Run `{prog} COMMAND --help` for the options of each command."
    return "\n".join([DESCRIPTION, *lines, "", run, ""])


def command_module(name: str) -> ModuleType:
    return importlib.import_module(f"viewer.commands.{SUBCOMMANDS[name]}")


def build_parser(commands: Sequence[str] = tuple(SUBCOMMANDS)) -> argparse.ArgumentParser:
    """The parser of ``commands`` (all by default: the top-level help lists them)."""
    name = prog()
    parser = argparse.ArgumentParser(
        prog=name,
        description=description(name),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in commands:
        command_module(name).add_parser(sub, name)
    return parser


def _open_closed_streams() -> None:
    """A command run with stdout or stderr closed (``report LOG >&-``) has them as None, and
    ``sys.stdout.write`` would end in a traceback: what it writes goes nowhere instead, as
    ``print`` does then."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            with contextlib.suppress(OSError):  # no /dev/null either: print() copes with None
                setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115


def _legible_stdout() -> None:
    """A terminal or pipe whose encoding cannot hold every character (ASCII, cp1252: the
    thin spaces of "3 746 ms") gets "?" for those, not a traceback after the work is done.
    JSON is written as UTF-8 bytes whatever the encoding (``commands.common.write_stdout``)."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    with contextlib.suppress(LookupError, AttributeError, ValueError):
        if codecs.lookup(encoding).name != "utf-8":
            sys.stdout.reconfigure(errors="replace")


def main(argv: Sequence[str] | None = None, *, leave: bool = False) -> int:
    """Run the command line; its exit status.  ``leave`` (``python -m viewer``): a headless
    command that ran to its end ends the process here, once its output is flushed
    (``leave_now``)."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    _open_closed_streams()
    _legible_stdout()
    # Bare paths (no subcommand) open the viewer, as a desktop app is expected to.
    if not args_in or (args_in[0] not in SUBCOMMANDS and args_in[0] not in ("-h", "--help")):
        args_in = ["open", *args_in]
    # A command needs only its own parser; the window opens without importing the others.
    only = [args_in[0]] if args_in[0] in SUBCOMMANDS else list(SUBCOMMANDS)
    args = build_parser(only).parse_args(_glued_negatives(args_in))
    try:
        code = int(command_module(args.command).run(args) or 0)
        sys.stdout.flush()  # here, not at exit, so a closed pipe is caught below
        if leave and args.command != "open":
            leave_now(code)
        return code
    except BrokenPipeError:
        # `report LOG | head -1`: the reader took what it wanted and left.  That is not the
        # command's failure, and whether a write saw it depends only on timing (an output
        # that fits the pipe's buffer is written before the reader leaves): every command
        # and form stops there quietly with status 0, as if the reader had read it all.
        _silence_stdout()
        return 0
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EIO, errno.EDQUOT):
            raise
        # `report LOG > /dev/full`, a full disk or quota: say so once, on stderr.
        _silence_stdout()
        with contextlib.suppress(Exception):
            print(f"{args.command}: cannot write the output: {exc.strerror}", file=sys.stderr)
        return 1


def _silence_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered goes nowhere at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout at exit


#: Options whose value may start with a minus sign (a range before the session's start).
NEGATIVE_VALUES = ("--range",)


def _glued_negatives(argv: list[str]) -> list[str]:
    """``--range -5:5`` as ``--range=-5:5``: argparse reads a value starting with '-' and
    holding a ':' as an option, and asked for '='."""
    out: list[str] = []
    it = iter(range(len(argv)))
    for i in it:
        a = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if a in NEGATIVE_VALUES and nxt is not None and nxt.startswith("-") and ":" in nxt:
            out.append(f"{a}={nxt}")
            next(it, None)
        else:
            out.append(a)
    return out


def run() -> NoReturn:
    """The installed commands' entry point, as ``python -m viewer``: a headless command
    ends its process once its output is flushed (``leave_now``)."""
    sys.exit(main(leave=True))


def leave_now(code: int) -> NoReturn:
    """End the process with ``code`` without tearing the interpreter down: a headless
    command's output is written and its files closed (every file the commands write is
    closed by a ``with`` before ``run`` returns), and freeing the tables of a big log, the
    modules and the arena one by one cost ~40 ms of a ~0.8 s report of the 10^6-event log
    (issue 15: the report against grep)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed or broken stream has nothing left
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
