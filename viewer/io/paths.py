"""Which files are logs, named once: the suffixes a folder's logs carry, the file dialogs'
filter, and the expansion of what a person named (files, folders, globs) into log paths.
The window (open, drop, recent files, compare) and the CLI (report's fleet) all use it."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path

#: What a log file's name ends with: plain daemon output (journald and redirections name it
#: .log, .txt, .out or .err) and the two compressions the reader opens.
LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".gz", ".zst")
#: The file dialogs' filter.
DIALOG_FILTER = "cuzk logs (" + " ".join(f"*{s}" for s in LOG_SUFFIXES) + ");;All files (*)"


def suffix_list() -> str:
    """The suffixes for a sentence: ".log, .txt, .out, .err, .gz or .zst"."""
    return ", ".join(LOG_SUFFIXES[:-1]) + " or " + LOG_SUFFIXES[-1]


#: Why a folder named as logs gives none, in the window's and the CLI's messages.
NO_LOG_IN_FOLDER = f"a directory with no {suffix_list()} file in it"


def unlistable(exc: OSError) -> str:
    """Why a folder could not be read, for a message."""
    return f"cannot list the folder ({exc.strerror or exc})"


def folder_problem(folder: str | Path) -> str:
    """Why ``folder``, named as logs, gives none: it cannot be listed, or holds no log."""
    try:
        os.listdir(folder)
    except OSError as exc:
        return unlistable(exc)
    return NO_LOG_IN_FOLDER


def is_log_name(name: str) -> bool:
    return name.endswith(LOG_SUFFIXES)


def expand_paths(
    paths: Iterable[str | Path], *, globs: bool = False, keep_empty: bool = False
) -> list[Path]:
    """Files as given (even with another suffix: the reader says what they are); a folder
    gives its log files, sorted by name (``keep_empty``: a folder with none stays, so that
    reading it reports it); with ``globs``, a name that is no file and holds ``*?[`` is a
    pattern (sorted; one matching nothing stays).  ``OSError`` for a folder that cannot be
    listed."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if globs and not path.exists() and glob.has_magic(str(raw)):
            hits = sorted(glob.glob(str(raw)))
            out.extend(expand_paths(hits, keep_empty=keep_empty) if hits else [path])
        elif path.is_dir():
            logs = sorted(p for p in path.iterdir() if p.is_file() and is_log_name(p.name))
            out.extend(logs or ([path] if keep_empty else []))
        else:
            out.append(path)
    return out


def file_identity(path: str | Path) -> object:
    """The file behind ``path`` (device and inode: one log under two names, or through a
    link, is one), or the path itself when it cannot be looked at."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return str(path)
    return (st.st_dev, st.st_ino)
