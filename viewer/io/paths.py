"""Which files are logs, named once: the suffixes a folder's logs carry, the file dialogs'
filter, and the expansion of what a person named (files, folders, globs) into log paths.
The window (open, drop, recent files, compare) and the CLI (report's fleet) all use it."""

from __future__ import annotations

import errno
import glob
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from viewer.model.timeline import display_path

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
    paths: Iterable[str | Path],
    *,
    globs: bool = False,
    keep_empty: bool = False,
    notes: list[str] | None = None,
) -> list[Path]:
    """Files as given (even with another suffix: the reader says what they are); a folder
    gives its log files, sorted by name (``keep_empty``: a folder with none, or one that
    cannot be listed, stays, so that reading it reports it); with ``globs``, a name that is
    no file and holds ``*?[`` is a pattern (sorted; one matching nothing stays).  A file
    reached twice (two spellings, a link, a folder named twice or inside a glob's reach) is
    kept once, as first named.  ``notes`` gets a line per log name in a folder that is no
    file to read (a dangling symlink, a symlink loop) and one for the duplicates dropped.
    ``OSError`` for a folder that cannot be listed (unless ``keep_empty``)."""
    said: dict[object, str] = {}  # a note per skipped entry, however often it is reached
    out = _expand(paths, globs, keep_empty, said)
    kept, seen = [], set()
    for path in out:
        ident = file_identity(path)
        if ident not in seen:
            seen.add(ident)
            kept.append(path)
    dropped = len(out) - len(kept)
    if dropped:
        said["duplicates"] = (
            f"dropped {dropped} duplicate{'s' if dropped > 1 else ''}: the same log reached "
            "again (another spelling, a link, or a folder or glob named twice) is read once"
        )
    if notes is not None:
        notes.extend(said.values())
    return kept


def _expand(
    paths: Iterable[str | Path], globs: bool, keep_empty: bool, notes: dict[object, str]
) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        try:
            if globs and not path.exists() and glob.has_magic(str(raw)):
                hits = sorted(glob.glob(str(raw)))
                out.extend(_expand(hits, False, keep_empty, notes) if hits else [path])
            elif path.is_dir():
                logs = _folder_logs(path, notes)
                out.extend(logs or ([path] if keep_empty else []))
            else:
                out.append(path)
        except OSError:  # a folder that cannot be listed or searched
            if not keep_empty:
                raise
            out.append(path)
    return out


def _folder_logs(folder: Path, notes: dict[object, str]) -> list[Path]:
    """The log files of ``folder``, sorted; a note in ``notes`` (by the entry's own
    identity) for each log name in it that cannot be read as a file (a dangling symlink, a
    symlink loop)."""
    logs = []
    for path in sorted(folder.iterdir()):
        if not is_log_name(path.name):
            continue
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            try:
                st = os.lstat(path)
                key: object = (st.st_dev, st.st_ino)
            except OSError:
                key = str(path)
            notes.setdefault(key, f"skipped {display_path(path)}: {_unreadable(path, exc)}")
            continue
        if stat.S_ISREG(mode):
            logs.append(path)
    return logs


def _unreadable(path: Path, exc: OSError) -> str:
    """Why a name in a folder is no file to read, for a note."""
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno in (errno.ENOENT, errno.ENOTDIR) and path.is_symlink():
        try:
            return f"dangling symlink (to {display_path(os.readlink(path))})"
        except OSError:
            return "dangling symlink"
    return exc.strerror or str(exc)


def file_identity(path: str | Path) -> object:
    """The file behind ``path`` (device and inode: one log under two names, or through a
    link, is one), or the path itself when it cannot be looked at."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return str(path)
    return (st.st_dev, st.st_ino)
