"""The annotations sidecar: ``<log>.annotations.json`` beside the log, or in the per-user
data folder when the log's folder is read-only or the log is a bundled sample (notes
never land in the checkout's ``sample_logs/``).

The log itself is never written.  A sidecar that cannot be used (unreadable, not JSON,
too big, another log's, a bad entry) is reported and kept as it is: ``save`` refuses to
write over it (``UnusableSidecar``) until the caller says the user chose to replace it;
then it is moved aside to ``<sidecar>.corrupt-<timestamp>``, never deleted.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import time
from pathlib import Path

from viewer.annotations.model import Annotation
from viewer.annotations.undo import AnnotationSet
from viewer.export.files import SIDECAR_SUFFIX, write_output
from viewer.export.format import display_path

SCHEMA = "cuzk-timeline-annotations/1"
SUFFIX = SIDECAR_SUFFIX
APP_DIR = "cuzk-timeline-viewer"
#: Set to 1 to keep every sidecar in the per-user data folder (tests, read-only shares).
ENV_USER_DIR = "CUZK_TIMELINE_USER_ANNOTATIONS"
#: The bundled sample logs: their notes are the user's, not the repository's.
SAMPLES_DIR = Path(__file__).resolve().parents[2] / "sample_logs"
#: A sidecar above either limit is refused unread: hand-made notes are a few dozen, and
#: these keep reading and drawing them well under a frame's worth of work.
MAX_SIDECAR_BYTES = 4 * 2**20
MAX_ANNOTATIONS = 5_000
_NO_ACCESS = (errno.EACCES, errno.EPERM, errno.EROFS)


class SidecarError(ValueError):
    """An annotations file that cannot be used; the message names the file and why."""


class UnusableSidecar(SidecarError):
    """``save`` would write over an annotations file that cannot be used (``path``,
    ``problem``): only a user's choice (``save(..., replace=True)``) may move it aside."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(
            f"the annotations file {display_path(path)} cannot be used ({problem}); "
            "it is kept as it is and not written over"
        )
        self.path = path
        self.problem = problem


# ---- where -----------------------------------------------------------------------------------


def user_data_dir() -> Path:
    """``$XDG_DATA_HOME/cuzk-timeline-viewer/annotations`` (default ``~/.local/share/...``)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / APP_DIR / "annotations"


def _local_path(log_path: Path) -> Path:
    return log_path.with_name(log_path.name + SUFFIX)


def _user_path(log_path: Path) -> Path:
    # fsencode: a name that is not UTF-8 hashes as its bytes (UTF-8 names as before).
    digest = hashlib.sha256(os.fsencode(log_path.resolve())).hexdigest()[:32]
    return user_data_dir() / f"{digest}.json"


def is_bundled_sample(log_path: str | os.PathLike) -> bool:
    """Whether ``log_path`` is one of the repository's ``sample_logs/`` (links followed)."""
    return Path(log_path).resolve().is_relative_to(SAMPLES_DIR)


def _use_user_dir(user_dir: bool | None) -> bool | None:
    """True / False when forced (argument, then environment); None: decide by the folder."""
    if user_dir is not None:
        return user_dir
    return True if os.environ.get(ENV_USER_DIR, "") not in ("", "0") else None


def sidecar_path(log_path: str | os.PathLike, *, user_dir: bool | None = None) -> Path:
    """Where ``save`` writes the annotations of ``log_path``: ``<log>.annotations.json``
    beside it, or the per-user data folder when that folder is not writable (or when
    forced with ``user_dir=True`` / ``$CUZK_TIMELINE_USER_ANNOTATIONS=1``, and always for
    a bundled sample)."""
    log_path = Path(log_path).absolute()
    forced = _use_user_dir(user_dir)
    if forced is None:
        forced = is_bundled_sample(log_path) or not os.access(log_path.parent, os.W_OK)
    return _user_path(log_path) if forced else _local_path(log_path)


def sidecar_candidates(log_path: str | os.PathLike, *, user_dir: bool | None = None) -> list[Path]:
    """Where ``load`` looks for the sidecar of ``log_path``, first match first."""
    log_path = Path(log_path).absolute()
    forced = _use_user_dir(user_dir)
    if forced is None:
        local, user = _local_path(log_path), _user_path(log_path)
        return [user, local] if is_bundled_sample(log_path) else [local, user]
    return [_user_path(log_path) if forced else _local_path(log_path)]


# ---- reading ---------------------------------------------------------------------------------


def _read_bounded(path: Path) -> bytes:
    """The bytes of ``path``, refusing anything but a regular file of at most
    ``MAX_SIDECAR_BYTES`` (never opening a FIFO, never reading /dev/zero forever)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise SidecarError("it is not a regular file")
        if st.st_size > MAX_SIDECAR_BYTES:
            raise SidecarError(_too_big(st.st_size))
        with open(path, "rb") as fh:
            data = fh.read(MAX_SIDECAR_BYTES + 1)
    except OSError as exc:
        raise SidecarError(f"cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_SIDECAR_BYTES:
        raise SidecarError(_too_big(len(data)))
    return data


def _too_big(size: int) -> str:
    return f"{size / 2**20:.1f} MB; an annotations file is at most {MAX_SIDECAR_BYTES >> 20} MB"


def _decode(data: bytes) -> object:
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SidecarError(f"not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise SidecarError(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise SidecarError("not an annotations file (JSON nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise SidecarError(f"not valid JSON ({exc})") from None


def _annotations(doc: object, log_name: str | None) -> list[Annotation]:
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise SidecarError(f"schema is {str(found)[:80]!r}, expected {SCHEMA!r}")
    if log_name is not None:
        log = doc.get("log")
        named = log.get("name") if isinstance(log, dict) else None
        if named != log_name:
            theirs, ours = display_path(str(named)[:200]), display_path(log_name)
            raise SidecarError(f"it belongs to another log ({theirs!r}, not {ours!r})")
    entries = doc.get("annotations", [] if log_name is None else None)
    if not isinstance(entries, list):
        raise SidecarError("'annotations' is not a list")
    if len(entries) > MAX_ANNOTATIONS:
        raise SidecarError(
            f"{len(entries)} annotations; an annotations file holds at most {MAX_ANNOTATIONS}"
        )
    try:
        items = [Annotation.from_dict(d) for d in entries]
        AnnotationSet(items)  # rejects duplicate ids
    except ValueError as exc:
        raise SidecarError(f"bad annotation: {exc}") from None
    return items


def read_sidecar(path: str | os.PathLike, log_name: str | None = None) -> list[Annotation]:
    """The annotations saved in ``path``, checked (size, JSON, schema, every field, at most
    ``MAX_ANNOTATIONS``); with ``log_name`` the file must name that log.  SidecarError
    saying what is wrong (the message leaves the file name to the caller)."""
    return _annotations(_decode(_read_bounded(Path(path))), log_name)


def load(
    log_path: str | os.PathLike, *, user_dir: bool | None = None
) -> tuple[AnnotationSet, str | None]:
    """The annotations saved for ``log_path`` and a warning (None when all went well).

    No sidecar gives an empty set.  A sidecar that cannot be used gives an empty set
    and a warning naming the file and the problem; the file is left as it is.
    """
    log_path = Path(log_path).absolute()
    found = [p for p in sidecar_candidates(log_path, user_dir=user_dir) if os.path.lexists(p)]
    if not found:
        return AnnotationSet(), None
    try:
        return AnnotationSet(read_sidecar(found[0], log_path.name)), None
    except SidecarError as exc:
        return AnnotationSet(), (
            f"The annotations file {display_path(found[0])} cannot be used ({exc}). "
            "It is kept as it is; no annotations are shown."
        )


# ---- writing ---------------------------------------------------------------------------------


def _document(annotations: AnnotationSet, log_path: Path) -> dict:
    return {
        "schema": SCHEMA,
        "log": {"name": log_path.name, "path": str(log_path)},
        "annotations": [a.to_dict() for a in annotations],
    }


def _move_aside(path: Path) -> Path:
    """Rename ``path`` to ``<path>.corrupt-<timestamp>[-n]`` (never over an existing file)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    dest = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while os.path.lexists(dest):
        dest = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        n += 1
    os.rename(path, dest)
    return dest


def _write_sidecar(path: Path, text: str, log_path: Path, replace: bool) -> None:
    """Write ``text`` at ``path`` (never over the log); an existing file there that is not
    this log's usable sidecar is moved aside when ``replace``, else UnusableSidecar."""
    if os.path.lexists(path):
        try:
            read_sidecar(path, log_path.name)
        except SidecarError as exc:
            if not replace:
                raise UnusableSidecar(path, str(exc)) from None
            _move_aside(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_output(path, text, [log_path], notes=True)


def save(
    annotations: AnnotationSet,
    log_path: str | os.PathLike,
    *,
    user_dir: bool | None = None,
    replace: bool = False,
) -> Path:
    """Write the sidecar of ``log_path`` atomically and mark the set saved; returns its path.

    Falls back to the per-user data folder when the log's folder refuses the write
    (read-only share, permissions), unless ``user_dir`` forces a place.  An existing
    sidecar that cannot be used raises UnusableSidecar, unless ``replace`` (the user
    chose to replace it): it is then moved aside first.
    """
    log_path = Path(log_path).absolute()
    if len(annotations) > MAX_ANNOTATIONS:
        raise SidecarError(f"{len(annotations)} annotations; at most {MAX_ANNOTATIONS} are saved")
    text = json.dumps(_document(annotations, log_path), indent=1, allow_nan=False) + "\n"
    size = len(text.encode("utf-8", "surrogateescape"))
    if size > MAX_SIDECAR_BYTES:
        raise SidecarError(f"the annotations would take {_too_big(size)}")
    path = sidecar_path(log_path, user_dir=user_dir)
    try:
        _write_sidecar(path, text, log_path, replace)
    except OSError as exc:
        if _use_user_dir(user_dir) is not None or exc.errno not in _NO_ACCESS:
            raise
        path = _user_path(log_path)
        _write_sidecar(path, text, log_path, replace)
    annotations.mark_saved()
    return path
