"""Whole-session tables computed once per Session object and shared by every figure.

``summarize`` asks for the started calls, the transitions and the job table
several times over (each figure is a function of the session); the model is
never mutated after loading, so the first answer stays right for the
session's lifetime.  Keyed weakly on the Session: a closed log frees them.
Callers treat the shared frames as read-only.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from typing import TypeVar
from weakref import WeakKeyDictionary

import numpy as np
import pandas as pd

from viewer.model import Session

T = TypeVar("T")

_memo: WeakKeyDictionary[Session, dict[Callable, object]] = WeakKeyDictionary()
_lock = threading.Lock()  # the panels' worker thread and the GUI thread share sessions


def per_session(fn: Callable[[Session], T]) -> Callable[[Session], T]:
    """Memoize ``fn(session)`` on the session object."""

    @functools.wraps(fn)
    def cached(session: Session) -> T:
        with _lock:
            memo = _memo.setdefault(session, {})
            if fn in memo:
                return memo[fn]  # type: ignore[return-value]
        value = fn(session)  # outside the lock: two threads may both compute, same result
        with _lock:
            return memo.setdefault(fn, value)  # type: ignore[return-value]

    return cached


def holds(session: Session) -> bool:
    """Whether any whole-session table of ``session`` is memoized now."""
    with _lock:
        return bool(_memo.get(session))


def forget(session: Session) -> None:
    """Let go of ``session``'s memoized tables (they are computed again when asked for)."""
    with _lock:
        _memo.pop(session, None)


class Columns:
    """Read-only numpy arrays of a frame's columns, each taken once.  ``frame[name]``
    costs ~8 µs in pandas (a Series is built each time); a session's figures read ~150
    columns, which was a third of a report on a log of many short daemon runs."""

    __slots__ = ("_arrays", "_frame")

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = weakref.ref(frame)
        self._arrays: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self._arrays[name]
        except KeyError:
            pass
        frame = self._frame()
        if frame is None:  # pragma: no cover - the frame owns this object
            raise KeyError(name)
        array = frame[name].to_numpy().view()
        array.flags.writeable = False  # a shared table is never written
        self._arrays[name] = array
        return array


_columns: dict[int, Columns] = {}


def columns(frame: pd.DataFrame) -> Columns:
    """The ``Columns`` of ``frame`` (kept while the frame lives).  For the tables shared by a
    session's figures (``session.partitions``, ``stages``, ``calls`` ...), which are never
    written after they are built."""
    key = id(frame)
    got = _columns.get(key)
    if got is None:
        got = _columns[key] = Columns(frame)
        weakref.finalize(frame, _columns.pop, key, None)
    return got
