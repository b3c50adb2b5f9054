"""Output files that never destroy an input: the one way every writer puts bytes on disk
(the ``export`` command, the window's image / report / table / trace saves, the annotations
sidecar).

- An output that is an input (same inode: the same path, a symlink or a hard link to it)
  is refused, and so is one that exists but is not a regular file (a directory, FIFO,
  socket or device: opening a FIFO would block, and renaming over a device as root
  would replace it).
- The bytes go to a temp file that ``tempfile`` creates (O_EXCL, random name, so a planted
  symlink is never followed) in the target's folder; it is fsynced, takes the existing
  target's mode (or 0666 minus the umask) and is renamed over the target: readers see the
  old file or the new one, never half of one; a failure leaves the old file and no temp.
- A symlinked output is written through: the link stays, its target gets the new bytes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from viewer.export.format import display_path

PathLike = str | os.PathLike

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class OutputRefused(OSError):
    """The output would overwrite an input or is not a regular file; the message says which
    file and why (an OSError, so every ``cannot write`` path reports it)."""


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _stat(path: PathLike) -> os.stat_result | None:
    """``os.stat`` following symlinks; None when nothing is there (or a dangling link)."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutputRefused(f"{display_path(path)}: symlink loop, refusing to write") from None
        raise


#: The annotations sidecar of a log is the log's name and this (``viewer.annotations``): an
#: output there would replace, or become, the log's notes.
SIDECAR_SUFFIX = ".annotations.json"


def _sidecar_of(path: PathLike, inputs: Iterable[PathLike | None]) -> PathLike | None:
    """The input whose annotations sidecar (beside it) ``path`` is, if any."""
    target = os.path.realpath(path)
    for source in inputs:
        if source is None or str(source).endswith(SIDECAR_SUFFIX):
            continue
        real = os.path.realpath(source)
        if target in (real + SIDECAR_SUFFIX, os.path.abspath(str(source)) + SIDECAR_SUFFIX):
            return source
    return None


def _planted(path: PathLike) -> None:
    """OutputRefused when ``path`` is a symlink that another user owns in a sticky folder
    (/tmp): the kernel's protected_symlinks rule, which careful tools follow too.  Writing
    through it would put our output wherever its owner pointed it."""
    try:
        link = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISLNK(link.st_mode):
        return
    folder = os.path.dirname(os.path.abspath(path)) or "."
    try:
        parent = os.stat(folder)
    except OSError:
        return
    me = os.geteuid() if hasattr(os, "geteuid") else link.st_uid
    sticky = bool(parent.st_mode & stat.S_ISVTX)
    if sticky and link.st_uid not in (me, parent.st_uid):
        raise OutputRefused(
            f"refusing to write {display_path(path)}: it is a symlink owned by another user "
            f"(uid {link.st_uid}) in the shared folder {display_path(folder)}; "
            "choose another output file"
        )


def resolve_output(
    path: PathLike, inputs: Iterable[PathLike | None] = (), *, notes: bool = False
) -> Path:
    """The file that writing ``path`` replaces (symlinks followed); OutputRefused when it
    is one of ``inputs`` or the annotations sidecar of one (unless ``notes``: the sidecar
    module writing the notes themselves), or exists without being a regular file."""
    name = display_path(path)
    if str(path) in ("", "-"):
        what = "an empty file name" if str(path) == "" else "'-' (standard output)"
        raise OutputRefused(
            f"the output is {what}: give a file name (the command prints to standard "
            "output without --out)"
        )
    inputs = list(inputs)
    owner = None if notes else _sidecar_of(path, inputs)
    if owner is not None:
        raise OutputRefused(
            f"refusing to write {name}: it holds the annotations of the input "
            f"{display_path(owner)}; choose another output file"
        )
    _planted(path)
    st = _stat(path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OutputRefused(f"{name} is {_kind(st.st_mode)}, not a regular file: refusing to write")
    if st is not None:
        for source in inputs:
            if source is None:
                continue
            try:
                other = os.stat(source)
            except OSError:
                continue  # an input that is not there cannot be overwritten
            if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                same = os.path.abspath(source) == os.path.abspath(path)
                how = "" if same else f" ({name} is a link to it)"
                raise OutputRefused(
                    f"refusing to write over the input {display_path(source)}{how}: "
                    "choose another output file"
                )
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _umask() -> int:
    """The process umask, read without changing it where the system allows."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _adopt(fd: int, target: Path) -> None:
    """Give the temp file the target's mode and owner (a new file: 0666 minus the umask)."""
    try:
        st = os.stat(target)
    except OSError:
        os.fchmod(fd, 0o666 & ~_umask())
        return
    os.fchmod(fd, stat.S_IMODE(st.st_mode))
    if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(OSError):  # only root may give a file away
            os.fchown(fd, st.st_uid, st.st_gid)


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def open_output(
    path: PathLike,
    inputs: Iterable[PathLike | None] = (),
    *,
    encoding: str | None = None,
    notes: bool = False,
) -> Iterator[IO]:
    """A file object to write output ``path`` through (binary; text with ``encoding``,
    lone surrogates written as backslash escapes).

    The target is checked first (``resolve_output``), and again just before the temp
    file is renamed over it; an exception in the ``with`` body leaves the old file.
    """
    inputs = list(inputs)
    target = resolve_output(path, inputs, notes=notes)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:  # say why, without the name of a temp file nobody asked for
        raise OSError(exc.errno, exc.strerror or str(exc)) from None
    try:
        mode, errors = ("w", "backslashreplace") if encoding else ("wb", None)
        with os.fdopen(fd, mode, encoding=encoding, errors=errors) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
            _adopt(fh.fileno(), target)
        resolve_output(target, inputs, notes=notes)  # nothing took its place meanwhile
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_folder(target.parent)


def write_output(
    path: PathLike,
    data: bytes | str | Iterable[bytes | str],
    inputs: Iterable[PathLike | None] = (),
    *,
    encoding: str = "utf-8",
    notes: bool = False,
) -> Path:
    """Write ``data`` (or its parts, one at a time: a table of 1.5 M rows is never held as
    text) to ``path`` as ``open_output`` does; returns the file written (a symlinked
    ``path``'s target).  Text is encoded in ``encoding``; a character it cannot encode (a
    lone surrogate) is written as a backslash escape rather than failing."""
    parts = [data] if isinstance(data, str | bytes) else data
    inputs = list(inputs)
    target = resolve_output(path, inputs, notes=notes)
    with open_output(target, inputs, notes=notes) as fh:
        for part in parts:
            fh.write(part.encode(encoding, "backslashreplace") if isinstance(part, str) else part)
    return target
