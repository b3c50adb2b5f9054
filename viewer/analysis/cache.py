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
from collections.abc import Callable
from typing import TypeVar
from weakref import WeakKeyDictionary

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


def made(session: Session) -> set[Callable]:
    """The ``per_session`` functions whose tables of ``session`` are memoized now."""
    with _lock:
        return set(_memo.get(session, ()))


def drop(session: Session, *fns: Callable, unless: set[Callable] = frozenset()) -> None:
    """Let go of the memoized tables of ``fns`` (``per_session`` functions) of ``session``,
    but those in ``unless`` (``made`` before: the window's own): one job that reads a log
    table by table (the trace) holds each only while it needs it."""
    with _lock:
        memo = _memo.get(session)
        for fn in fns:
            fn = getattr(fn, "__wrapped__", fn)
            if memo is not None and fn not in unless:
                memo.pop(fn, None)


def forget(session: Session) -> None:
    """Let go of ``session``'s memoized tables and of the column views its own tables made
    (both are made again when asked for)."""
    with _lock:
        _memo.pop(session, None)
    for frame in (session.partitions, session.jobs, session.workers, session.unattributed):
        frame.release()


def forget_since(session: Session, had: set[Callable]) -> None:
    """Let go of what was made of ``session`` since ``had`` (its ``made`` then): every
    table, and the column views its own tables made, where it had none (a command's
    session read once); else only the tables made since (a window's stay)."""
    if had:
        drop(session, *(made(session) - had))
    else:
        forget(session)
