"""`python -m viewer open LOG...`: the desktop viewer."""

from __future__ import annotations

import argparse
import os
import sys

from viewer.commands.common import add_workers_argument, bad_workers, prog


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    p = sub.add_parser(
        name,
        help="open logs in the viewer window (the default command)",
        description="Open cuzk daemon logs in the swimlane viewer.",
    )
    p.add_argument(
        "paths", nargs="*", metavar="LOG", help="log files (plain, .gz or .zst) or folders"
    )
    add_workers_argument(p)
    p.add_argument(
        "--follow",
        action="store_true",
        help="keep reading the log as it grows, like tail -f (plain files; View > Follow)",
    )


def _no_display() -> bool:
    """On Linux without X11/Wayland (and no QT_QPA_PLATFORM), Qt would abort: say so instead."""
    return (
        sys.platform.startswith("linux")
        and not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
        and not os.environ.get("QT_QPA_PLATFORM")
    )


def run(args: argparse.Namespace) -> int:
    if bad_workers("open", args.workers_per_gpu):
        return 2
    if _no_display():
        print(
            "No display: the viewer window needs X11 or Wayland (DISPLAY is not set).\n"
            "Headless, the same figures come from:\n"
            f"  {prog()} report {' '.join(args.paths) or 'LOG'}\n"
            f"or run the window on a virtual screen: xvfb-run {prog()} LOG",
            file=sys.stderr,
        )
        return 2
    # The Qt-free stack first: once PySide6 is imported, its import hook reads the source
    # of every module imported after it (~0.1 s more for numpy and pandas).
    import viewer.analysis
    import viewer.io  # noqa: F401

    try:
        from viewer.ui.app import run_app
    except ImportError as exc:
        if exc.name is None or exc.name.split(".")[0] not in ("PySide6", "shiboken6"):
            raise  # a bug of ours, not a missing Qt: show it whole
        print(
            f"The viewer window needs PySide6, which cannot be loaded here ({exc}); "
            f"`make run` installs it. Headless, `{prog()} report LOG` gives the "
            "same figures.",
            file=sys.stderr,
        )
        return 2
    return run_app(args.paths, workers_per_gpu=args.workers_per_gpu, follow=args.follow)
