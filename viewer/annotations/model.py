"""One annotation (a note, range, arrow or ruler) and the checks that keep a hostile
sidecar from putting anything else on screen."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

KINDS = ("note", "range", "arrow", "ruler")
#: Bounds of what a sidecar may hold, so that reading one cannot freeze the window.
MAX_TEXT = 10_000  # characters of a label
MAX_NAME = 500  # characters of an id or a lane name
MAX_TIME_MS = 1e15  # |t| in ms (about 31 700 years): finite, and exact in float64
MAX_SESSION = 1_000_000


def _number(d: dict, key: str) -> float:
    """``d[key]`` as a finite float within ``MAX_TIME_MS``; ValueError otherwise."""
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ValueError(f"{key} must be a number, not {type(v).__name__}")
    if not (isinstance(v, int) or math.isfinite(v)) or not -MAX_TIME_MS <= v <= MAX_TIME_MS:
        raise ValueError(f"{key} must be a finite number of ms within ±{MAX_TIME_MS:.0e}")
    return float(v)


def _text(d: dict, key: str, limit: int, default: str | None = None) -> str | None:
    v = d.get(key, default)
    if v is None:
        return None
    if not isinstance(v, str):
        raise ValueError(f"{key} must be a string, not {type(v).__name__}")
    if len(v) > limit:
        raise ValueError(f"{key} is {len(v)} characters long, the most is {limit}")
    return v


@dataclass(frozen=True)
class Annotation:
    """One mark on the timeline, in session ``session``'s offsets (ms).

    A note sits at ``t0_ms`` (``t1_ms`` is None); a range or ruler spans
    ``t0_ms``..``t1_ms`` (stored in order); an arrow points from ``t0_ms`` to
    ``t1_ms``.  ``lane`` is the lane name it is pinned to (None: the time axis).
    ``session`` is the session's position in the log (0 = the first).  An arrow may point
    into another lane, ``head_lane`` (None: its own), so at any angle.
    """

    id: str
    kind: str
    t0_ms: float
    t1_ms: float | None = None
    lane: str | None = None
    text: str = ""
    session: int = 0
    head_lane: str | None = None

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
        d = dataclasses.asdict(self)
        if d["head_lane"] is None:
            del d["head_lane"]  # a sidecar an older viewer still reads
        return d

    @classmethod
    def from_dict(cls, d: object) -> Annotation:
        """From ``to_dict`` output, checked field by field (types, finite times within
        ``MAX_TIME_MS``, text lengths, session); ValueError saying what is wrong."""
        if not isinstance(d, dict):
            raise ValueError(f"an annotation is an object, not {type(d).__name__}")
        unknown = set(d) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"unknown annotation fields {sorted(map(str, unknown))}")
        for key in ("id", "kind", "t0_ms"):
            if key not in d:
                raise ValueError(f"an annotation needs {key!r}")
        id_ = d["id"]
        if isinstance(id_, int) and not isinstance(id_, bool) and abs(id_) < 10**18:
            id_ = str(id_)
        if not isinstance(id_, str) or len(id_) > MAX_NAME:
            raise ValueError(f"an annotation id is a string of at most {MAX_NAME} characters")
        session = d.get("session", 0)
        if isinstance(session, bool) or not isinstance(session, int):
            raise ValueError(f"session must be a whole number, not {type(session).__name__}")
        if not 0 <= session <= MAX_SESSION:
            raise ValueError(f"session must be between 0 and {MAX_SESSION}, not {session}")
        return cls(
            id=id_,
            kind=str(_text(d, "kind", MAX_NAME)),
            t0_ms=_number(d, "t0_ms"),
            t1_ms=None if d.get("t1_ms") is None else _number(d, "t1_ms"),
            lane=_text(d, "lane", MAX_NAME),
            text=str(_text(d, "text", MAX_TEXT, "")),
            session=session,
            head_lane=_text(d, "head_lane", MAX_NAME) if d.get("kind") == "arrow" else None,
        )
