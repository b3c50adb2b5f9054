"""Annotations on a timeline (notes, ranges, arrows, rulers), their undo stack and sidecar file.

Pure data, no Qt: the GUI draws ``AnnotationSet`` items and calls its
add / update / remove / move / undo / redo; ``save`` / ``load`` keep them in a
versioned JSON sidecar, ``<log>.annotations.json`` beside the log, or in the
per-user data folder when the log's folder is read-only.  The log itself is
never written.  A sidecar that cannot be read is moved aside, never overwritten.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import json
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

SCHEMA = "cuzk-timeline-annotations/1"
KINDS = ("note", "range", "arrow", "ruler")
SUFFIX = ".annotations.json"
APP_DIR = "cuzk-timeline-viewer"
#: Set to 1 to keep every sidecar in the per-user data folder (tests, read-only shares).
ENV_USER_DIR = "CUZK_TIMELINE_USER_ANNOTATIONS"
_NO_ACCESS = (errno.EACCES, errno.EPERM, errno.EROFS)


@dataclass(frozen=True)
class Annotation:
    """One mark on the timeline, in session ``session``'s offsets (ms).

    A note sits at ``t0_ms`` (``t1_ms`` is None); a range or ruler spans
    ``t0_ms``..``t1_ms`` (stored in order); an arrow points from ``t0_ms`` to
    ``t1_ms``.  ``lane`` is the lane name it is pinned to (None: the time axis).
    """

    id: str
    kind: str
    t0_ms: float
    t1_ms: float | None = None
    lane: str | None = None
    text: str = ""
    session: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"annotation kind must be one of {KINDS}, not {self.kind!r}")
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"annotation id must be a non-empty string, not {self.id!r}")
        if not math.isfinite(self.t0_ms):
            raise ValueError(f"annotation {self.id}: t0_ms must be finite")
        if self.kind == "note":
            if self.t1_ms is not None:
                raise ValueError(f"annotation {self.id}: a note has no t1_ms")
        elif self.t1_ms is None or not math.isfinite(self.t1_ms):
            raise ValueError(f"annotation {self.id}: a {self.kind} needs a finite t1_ms")
        elif self.kind in ("range", "ruler") and self.t1_ms < self.t0_ms:
            t0, t1 = self.t1_ms, self.t0_ms
            object.__setattr__(self, "t0_ms", t0)
            object.__setattr__(self, "t1_ms", t1)

    def moved(self, dt_ms: float) -> Annotation:
        """The same annotation shifted by ``dt_ms``."""
        t1 = None if self.t1_ms is None else self.t1_ms + dt_ms
        return dataclasses.replace(self, t0_ms=self.t0_ms + dt_ms, t1_ms=t1)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Annotation:
        """From ``to_dict`` output; raises ValueError / TypeError on a bad entry."""
        if not isinstance(d, dict):
            raise TypeError(f"an annotation is an object, not {type(d).__name__}")
        unknown = set(d) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"unknown annotation fields {sorted(unknown)}")
        t1 = d.get("t1_ms")
        return cls(
            id=str(d["id"]),
            kind=str(d["kind"]),
            t0_ms=float(d["t0_ms"]),
            t1_ms=None if t1 is None else float(t1),
            lane=None if d.get("lane") is None else str(d["lane"]),
            text=str(d.get("text", "")),
            session=int(d.get("session", 0)),
        )


@dataclass
class _Command:
    """One undoable step: ``id`` went from ``before`` to ``after`` (None = absent)."""

    label: str
    id: str
    before: Annotation | None
    after: Annotation | None
    position: int  # list position of the annotation (restored on undo of a removal)
    mergeable: bool = False


class AnnotationSet:
    """The annotations of one log, in insertion order, with an undo / redo stack."""

    def __init__(self, items: Iterable[Annotation] = ()) -> None:
        self._items: dict[str, Annotation] = {}
        for a in items:
            if a.id in self._items:
                raise ValueError(f"duplicate annotation id {a.id!r}")
            self._items[a.id] = a
        self._stack: list[_Command] = []
        self._done = 0  # commands applied (the rest of the stack can be redone)
        self._saved: int | None = 0  # value of _done when last saved (None: unreachable)
        self._listeners: list[Callable[[], None]] = []

    # ---- reading ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Annotation]:
        return iter(list(self._items.values()))

    def __contains__(self, id_: object) -> bool:
        return id_ in self._items

    def get(self, id_: str) -> Annotation:
        try:
            return self._items[id_]
        except KeyError:
            raise KeyError(f"no annotation {id_!r}") from None

    def in_session(self, session: int) -> list[Annotation]:
        return [a for a in self._items.values() if a.session == session]

    def in_range(self, session: int, t0_ms: float, t1_ms: float) -> list[Annotation]:
        """Annotations of ``session`` that touch ``t0_ms``..``t1_ms`` (what a view must draw)."""
        out = []
        for a in self.in_session(session):
            lo, hi = sorted((a.t0_ms, a.t0_ms if a.t1_ms is None else a.t1_ms))
            if lo <= t1_ms and hi >= t0_ms:
                out.append(a)
        return out

    @property
    def dirty(self) -> bool:
        """True when there are changes since the last ``mark_saved`` (or load)."""
        return self._saved != self._done

    def mark_saved(self) -> None:
        self._saved = self._done

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` after every change (the GUI repaints); returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    # ---- editing ---------------------------------------------------------------------------

    def new_id(self) -> str:
        """The next free id: ``a1``, ``a2``, ..."""
        taken = [int(i[1:]) for i in self._items if i[:1] == "a" and i[1:].isdigit()]
        taken += [int(c.id[1:]) for c in self._stack if c.id[:1] == "a" and c.id[1:].isdigit()]
        return f"a{max(taken, default=0) + 1}"

    def add(
        self,
        kind: str,
        t0_ms: float,
        t1_ms: float | None = None,
        *,
        lane: str | None = None,
        text: str = "",
        session: int = 0,
        id: str | None = None,
    ) -> Annotation:
        """Add an annotation (a fresh id unless given); undoable."""
        ann = Annotation(id or self.new_id(), kind, t0_ms, t1_ms, lane, text, session)
        if ann.id in self._items:
            raise ValueError(f"duplicate annotation id {ann.id!r}")
        self._push(_Command(f"Add {kind}", ann.id, None, ann, len(self._items)))
        return ann

    def update(self, id_: str, **changes: object) -> Annotation:
        """Change fields of an annotation (not its id); undoable."""
        old = self.get(id_)
        if "id" in changes:
            raise ValueError("an annotation's id cannot change")
        new = dataclasses.replace(old, **changes)
        self._push(_Command(f"Edit {old.kind}", id_, old, new, self._position(id_)))
        return new

    def move(
        self, id_: str, dt_ms: float, *, lane: str | None = None, merge: bool = False
    ) -> Annotation:
        """Shift an annotation in time (and onto ``lane`` if given); undoable.

        With ``merge`` consecutive moves of the same annotation make one undo
        step, so a mouse drag undoes in one go.
        """
        old = self.get(id_)
        new = old.moved(dt_ms)
        if lane is not None:
            new = dataclasses.replace(new, lane=lane)
        top = self._stack[self._done - 1] if self._done else None
        if merge and top and top.mergeable and top.id == id_ and self._done == len(self._stack):
            top.after = new
            self._apply(id_, new, top.position)
            if self._saved == self._done:
                self._saved = None
            self._notify()
            return new
        cmd = _Command(f"Move {old.kind}", id_, old, new, self._position(id_), mergeable=merge)
        self._push(cmd)
        return new

    def remove(self, id_: str) -> Annotation:
        """Delete an annotation; undoable."""
        old = self.get(id_)
        self._push(_Command(f"Delete {old.kind}", id_, old, None, self._position(id_)))
        return old

    # ---- undo / redo -----------------------------------------------------------------------

    @property
    def can_undo(self) -> bool:
        return self._done > 0

    @property
    def can_redo(self) -> bool:
        return self._done < len(self._stack)

    @property
    def undo_label(self) -> str | None:
        """E.g. "Move note" for an "Undo Move note" menu entry; None when nothing to undo."""
        return self._stack[self._done - 1].label if self.can_undo else None

    @property
    def redo_label(self) -> str | None:
        return self._stack[self._done].label if self.can_redo else None

    def undo(self) -> bool:
        """Revert the last change; False when there is nothing to undo."""
        if not self.can_undo:
            return False
        self._done -= 1
        cmd = self._stack[self._done]
        self._apply(cmd.id, cmd.before, cmd.position)
        self._notify()
        return True

    def redo(self) -> bool:
        """Re-apply the last undone change; False when there is nothing to redo."""
        if not self.can_redo:
            return False
        cmd = self._stack[self._done]
        self._done += 1
        self._apply(cmd.id, cmd.after, cmd.position)
        self._notify()
        return True

    # ---- internals -------------------------------------------------------------------------

    def _position(self, id_: str) -> int:
        return list(self._items).index(id_)

    def _push(self, cmd: _Command) -> None:
        if self._saved is not None and self._saved > self._done:
            self._saved = None  # the saved state was in the redo branch we drop
        del self._stack[self._done :]
        self._stack.append(cmd)
        self._done += 1
        self._apply(cmd.id, cmd.after, cmd.position)
        self._notify()

    def _apply(self, id_: str, value: Annotation | None, position: int) -> None:
        if value is None:
            self._items.pop(id_, None)
        elif id_ in self._items:
            self._items[id_] = value
        else:
            items = list(self._items.items())
            items.insert(min(position, len(items)), (id_, value))
            self._items = dict(items)

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()


# ---- persistence ----------------------------------------------------------------------------


def user_data_dir() -> Path:
    """``$XDG_DATA_HOME/cuzk-timeline-viewer/annotations`` (default ``~/.local/share/...``)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / APP_DIR / "annotations"


def _local_path(log_path: Path) -> Path:
    return log_path.with_name(log_path.name + SUFFIX)


def _user_path(log_path: Path) -> Path:
    digest = hashlib.sha256(str(log_path.resolve()).encode("utf-8")).hexdigest()[:32]
    return user_data_dir() / f"{digest}.json"


def _use_user_dir(user_dir: bool | None) -> bool | None:
    """True / False when forced (argument, then environment); None: decide by the folder."""
    if user_dir is not None:
        return user_dir
    return True if os.environ.get(ENV_USER_DIR, "") not in ("", "0") else None


def sidecar_path(log_path: str | os.PathLike, *, user_dir: bool | None = None) -> Path:
    """Where ``save`` writes the annotations of ``log_path``: ``<log>.annotations.json``
    beside it, or the per-user data folder when that folder is not writable (or when
    forced with ``user_dir=True`` / ``$CUZK_TIMELINE_USER_ANNOTATIONS=1``)."""
    log_path = Path(log_path).absolute()
    forced = _use_user_dir(user_dir)
    if forced is None:
        forced = not os.access(log_path.parent, os.W_OK)
    return _user_path(log_path) if forced else _local_path(log_path)


def _document(annotations: AnnotationSet, log_path: Path) -> dict:
    return {
        "schema": SCHEMA,
        "log": {"name": log_path.name, "path": str(log_path)},
        "annotations": [a.to_dict() for a in annotations],
    }


def _parse(path: Path, log_path: Path) -> list[Annotation]:
    """The annotations in ``path``; ValueError naming the problem when it is not ours."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(f"schema is {found!r}, expected {SCHEMA!r}")
    log = doc.get("log")
    named = log.get("name") if isinstance(log, dict) else None
    if named != log_path.name:
        raise ValueError(f"it belongs to another log ({named!r}, not {log_path.name!r})")
    entries = doc.get("annotations")
    if not isinstance(entries, list):
        raise ValueError("'annotations' is not a list")
    try:
        items = [Annotation.from_dict(d) for d in entries]
        AnnotationSet(items)  # rejects duplicate ids
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"bad annotation: {exc}") from None
    return items


def _move_aside(path: Path) -> Path:
    """Rename ``path`` to ``<path>.corrupt-<timestamp>[-n]`` (never over an existing file)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    dest = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while dest.exists():
        dest = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        n += 1
    os.rename(path, dest)
    return dest


def load(
    log_path: str | os.PathLike, *, user_dir: bool | None = None
) -> tuple[AnnotationSet, str | None]:
    """The annotations saved for ``log_path`` and a warning (None when all went well).

    No sidecar gives an empty set.  A sidecar that is not valid JSON, has
    another schema or names another log is moved aside to
    ``<sidecar>.corrupt-<timestamp>`` and reported; the set is then empty.
    """
    log_path = Path(log_path).absolute()
    forced = _use_user_dir(user_dir)
    if forced is None:
        candidates = [_local_path(log_path), _user_path(log_path)]
    else:
        candidates = [_user_path(log_path) if forced else _local_path(log_path)]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        return AnnotationSet(), None
    try:
        return AnnotationSet(_parse(path, log_path)), None
    except OSError as exc:
        return AnnotationSet(), f"annotations file {path} could not be read: {exc.strerror}"
    except ValueError as exc:
        problem = str(exc)
    try:
        dest = _move_aside(path)
    except OSError as exc:
        return AnnotationSet(), (
            f"annotations file {path} is unusable ({problem}) and could not be moved aside "
            f"({exc.strerror}); it is left as it is and starting with no annotations"
        )
    return AnnotationSet(), (
        f"annotations file {path} is unusable ({problem}); moved it aside to {dest.name} "
        "and started with no annotations"
    )


def _atomic_write(path: Path, doc: dict) -> None:
    """Write ``doc`` to a temp file beside ``path``, fsync, then rename over ``path``:
    a crash or error at any point leaves the old file whole."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1, allow_nan=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):  # mkstemp makes it 0600; keep the usual mode
            os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _write_sidecar(path: Path, doc: dict, log_path: Path) -> None:
    """Write ``doc`` at ``path``; an existing file that is not this log's sidecar is
    moved aside first (a failure to do so raises rather than overwrite it)."""
    if path.exists():
        try:
            _parse(path, log_path)
        except ValueError:
            _move_aside(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, doc)


def save(
    annotations: AnnotationSet, log_path: str | os.PathLike, *, user_dir: bool | None = None
) -> Path:
    """Write the sidecar of ``log_path`` atomically and mark the set saved; returns its path.

    Falls back to the per-user data folder when the log's folder refuses the
    write (read-only share, permissions), unless ``user_dir`` forces a place.
    """
    log_path = Path(log_path).absolute()
    doc = _document(annotations, log_path)
    path = sidecar_path(log_path, user_dir=user_dir)
    if path.resolve() == log_path.resolve():
        raise ValueError(f"refusing to write annotations over the log {log_path}")
    try:
        _write_sidecar(path, doc, log_path)
    except OSError as exc:
        if _use_user_dir(user_dir) is not None or exc.errno not in _NO_ACCESS:
            raise
        path = _user_path(log_path)
        _write_sidecar(path, doc, log_path)
    annotations.mark_saved()
    return path
