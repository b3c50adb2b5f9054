"""Search a session's partitions by job id, partition, worker, GPU or event.

A query is words separated by spaces, all of which must hold: ``job:73b0`` (or a bare
word) matches job ids starting with it (any case); ``p:3`` / ``partition:3``,
``w:1`` / ``worker:1`` and ``gpu:0`` match numbers (``p:0,1`` either); an event name
(``GPU_PICKUP``, ``synth_end``, ``event:queue`` ...) keeps the partitions that have that
event and goes to its time; ``open`` keeps the calls or syntheses that never ended.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from viewer.model import Session

#: Event name -> the partitions column holding its time.
EVENTS = {
    "SYNTH_START": "synth_start",
    "SYNTH_END": "synth_end",
    "GPU_QUEUE": "queued",
    "CHAN_SEND": "queued",
    "QUEUE": "queued",
    "GPU_PICKUP": "pickup",
    "PICKUP": "pickup",
    "GPU_START": "gpu_start",
    "GPU_END": "gpu_end",
}
#: Query key -> what it matches.
KEYS = {
    "job": "job",
    "j": "job",
    "partition": "partition",
    "p": "partition",
    "worker": "worker",
    "w": "worker",
    "gpu": "gpu",
    "g": "gpu",
    "event": "event",
    "e": "event",
}
HELP = "job id prefix, p:3, w:1, gpu:0, an event (GPU_START, synth_end …), open"
_TERM = re.compile(r"^([a-zA-Z]+)[:=](.*)$")


class SearchError(ValueError):
    """A query that cannot be read; the message says which word and why."""


@dataclass(frozen=True)
class Query:
    """A parsed query: every field that is set must hold (fields of lists: any of them)."""

    jobs: tuple[str, ...] = ()  # job id prefixes, lower case
    partitions: tuple[int, ...] = ()
    workers: tuple[int, ...] = ()
    gpus: tuple[int, ...] = ()
    event: str = ""  # a key of EVENTS
    open: bool = False

    @property
    def empty(self) -> bool:
        return self == Query()


@dataclass(frozen=True)
class Matches:
    """The partitions (rows of ``session.partitions``) a query matches, in time order, and
    the time each is found at (its event's, else its GPU_START or SYNTH_START)."""

    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    event: str = ""

    def __len__(self) -> int:
        return len(self.rows)


def _numbers(key: str, text: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in text.split(",") if v != "")
    except ValueError:
        raise SearchError(f"{key}: expects numbers such as {key}:3 or {key}:0,1") from None


def _event(text: str) -> str:
    name = text.upper()
    if name not in EVENTS:
        raise SearchError(f"unknown event {text!r}; events: {', '.join(dict.fromkeys(EVENTS))}")
    return name


#: A query longer than this (characters, terms) is a paste gone wrong, not a search: each
#: job term is one pass over every job id (100 000 pasted characters stalled the window
#: for 19.5 s, issue 27 item 13).
MAX_QUERY_CHARS = 1000
MAX_TERMS = 32


def parse_query(text: str) -> Query:
    """``text`` as a ``Query`` (see the module's docstring); ``SearchError`` if unreadable."""
    if len(text) > MAX_QUERY_CHARS:
        raise SearchError(
            f"a search of {len(text):,} characters: at most {MAX_QUERY_CHARS:,}".replace(",", " ")
        )
    if len(words := text.split()) > MAX_TERMS:
        raise SearchError(f"a search of {len(words)} terms: at most {MAX_TERMS}")
    jobs: list[str] = []
    found: dict[str, tuple[int, ...]] = {}
    event, is_open = "", False
    for word in text.split():
        m = _TERM.match(word)
        if m is not None and m[1].lower() not in KEYS:
            raise SearchError(f"unknown key {m[1]!r} in {word!r}; try {HELP}")
        if m is None:
            if word.upper() in EVENTS:
                event = _event(word)
            elif word.lower() == "open":
                is_open = True
            else:
                jobs.append(word.lower())
            continue
        key, value = KEYS[m[1].lower()], m[2]
        if not value:
            raise SearchError(f"{word!r} needs a value after the colon")
        if key == "job":
            jobs.append(value.lower())
        elif key == "event":
            event = _event(value)
        else:
            found[key] = found.get(key, ()) + _numbers(m[1], value)
    return Query(
        jobs=tuple(jobs),
        partitions=found.get("partition", ()),
        workers=found.get("worker", ()),
        gpus=found.get("gpu", ()),
        event=event,
        open=is_open,
    )


def find(session: Session, query: Query | str) -> Matches:
    """The partitions of ``session`` that ``query`` matches, in time order."""
    if isinstance(query, str):
        query = parse_query(query)
    if query.empty:
        return Matches()
    p = session.partitions
    keep = np.ones(len(p), dtype=bool)
    if query.jobs:
        ids = session.jobs["job_id"]
        # numpy's strings (``keys.TEXT``) as they are; an object column as fixed-width text
        ids = np.strings.lower(ids if ids.dtype.kind == "T" else ids.astype(str))
        hit = np.zeros(len(ids), dtype=bool)
        for prefix in query.jobs:
            hit |= np.strings.startswith(ids, prefix)
        keep &= hit[p["job"]]
    for values, column in (
        (query.partitions, "partition"),
        (query.workers, "worker"),
        (query.gpus, "gpu"),
    ):
        if values:
            keep &= np.isin(p[column], values)
    if query.open:
        keep &= p["gpu_open"].astype(bool, copy=False) | p["synth_open"].astype(bool, copy=False)
    if query.event:
        times = p[EVENTS[query.event]].astype(np.float64, copy=False)
    else:
        times = p["gpu_start"].astype(np.float64, copy=False)
        times = np.where(np.isfinite(times), times, p["synth_start"].astype(np.float64, copy=False))
    keep &= np.isfinite(times)
    rows = np.flatnonzero(keep)
    order = np.argsort(times[rows], kind="stable")
    return Matches(rows[order].astype(np.int64), times[rows][order], query.event)
