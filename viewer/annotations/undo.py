"""The annotations of one log with their undo / redo stack (pure data, no Qt: the GUI
calls add / update / remove / move / undo / redo and repaints on every change)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from viewer.annotations.model import Annotation


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
        head_lane: str | None = None,
    ) -> Annotation:
        """Add an annotation (a fresh id unless given); undoable."""
        ann = Annotation(
            id or self.new_id(), kind, t0_ms, t1_ms, lane, text, session, head_lane=head_lane
        )
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
