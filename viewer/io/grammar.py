"""The grammar of a cuzk log: one table of records, events, detail fields and limits.

Every parser follows it: the exact regex parser (``exact``) builds its patterns from it,
the numpy parser of the daemon's strict forms (``strict``) its lookups, and the compiled
scanner (``_cscan.c``) includes ``_grammar.h``, which is generated from it
(``python -c "import viewer.io.grammar as g; g.write_header()"`` rewrites the header; a
test holds the header, and the tables the built module reports, equal to this one).

A line ends at LF, CR or CRLF.  A record starts at each ``TIMELINE,`` or ``CUZK_TIMING:``
and runs to the next one on its line, or to the line end:

    TIMELINE,<offset ms>,<EVENT>,<job id>[,<detail>]
    CUZK_TIMING: [gpu_tid=<n> ]<key>=<ms>[ <key>=<ms>]

Tracing lines that mark a daemon start or a GPU worker's GPU are found by their words.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: Where records start; a CUZK_TIMING record's text is taken from ``TIMING:`` on.
TL = b"TIMELINE,"
CZ = b"CUZK_TIMING:"
CZ_TEXT = b"TIMING:"
# The compiled scanner probes for both record starts by the three bytes they share.
assert TL[:3] == CZ_TEXT[:3] and CZ.endswith(CZ_TEXT)

#: Tracing lines, by the words that mark them, and the three bytes of those words the
#: compiled scanner probes for (at ``probe`` in the words).
MARK_DAEMON, MARK_WORKER = 0, 1


@dataclass(frozen=True)
class Marker:
    words: bytes
    code: int
    probe: int


MARKERS = (
    Marker(b"cuzk-daemon starting", MARK_DAEMON, 3),  # "k-d"
    Marker(b"GPU worker started", MARK_WORKER, 2),  # "U w"
)

#: Event name -> code; both queue events (CHAN_SEND, older; GPU_QUEUE, newer) mean "queued".
EVENTS: tuple[tuple[bytes, int], ...] = (
    (b"SYNTH_START", 0),
    (b"SYNTH_END", 1),
    (b"CHAN_SEND", 2),
    (b"GPU_QUEUE", 2),
    (b"GPU_PICKUP", 3),
    (b"GPU_START", 4),
    (b"GPU_END", 5),
)
SYNTH_START, SYNTH_END, QUEUED, GPU_PICKUP, GPU_START, GPU_END = range(6)
NEEDS_WORKER = (GPU_PICKUP, GPU_START, GPU_END)

#: Limits: a number with more digits, or a larger value, is damage (``bad_number``).
MAX_OFFSET_DIGITS = 15  # int64 offsets, exact as float64 times (below 2^53)
MAX_MS_DIGITS = 12  # a duration figure
MAX_ID_DIGITS = 9  # worker, partition and gpu_tid in the strict form
MAX_ID = 2**31 - 1  # worker and partition are int32 columns
MAX_JOB = 64  # longer job ids take the exact path
MAX_KIND = 32  # longer kinds take the exact path


@dataclass(frozen=True)
class Key:
    """A detail field: ``name=value`` (``flag``: the bare word)."""

    name: bytes
    kind: str  # "id" (int32), "ms" (float64), "text" or "flag"
    digits: int = 0  # the most digits of a number in the strict form

    @property
    def most(self) -> int | None:
        """The largest value the field's column holds (None: float64, exact to 2^53)."""
        return MAX_ID if self.kind == "id" else None


#: Detail fields, in the only order the strict form has them (any order is read exactly).
DETAIL_KEYS = (
    Key(b"worker", "id", MAX_ID_DIGITS),
    Key(b"partition", "id", MAX_ID_DIGITS),
    Key(b"synth_ms", "ms", MAX_MS_DIGITS),
    Key(b"gpu_ms", "ms", MAX_MS_DIGITS),
    Key(b"kind", "text"),
    Key(b"monolithic", "flag"),
)
NUMBER_KEYS = {k.name: k.most for k in DETAIL_KEYS if k.kind in ("id", "ms")}
# One text key (kind=) and one flag key (monolithic), the flag last: nothing follows it.
assert [k.kind for k in DETAIL_KEYS].count("text") == 1 and DETAIL_KEYS[-1].kind == "flag"

#: The CUZK_TIMING lines of one GPU call, in the form the daemon writes them after
#: ``CUZK_TIMING: [gpu_tid=N ]``: (first key, second key or None); a line's code is its
#: position here.  Other CUZK_TIMING lines (async_dealloc_ms, ...) are ignored.
CUZK_FORMS: tuple[tuple[bytes, bytes | None], ...] = (
    (b"pre_lock_cpu_ms", b"mutex_wait_ms"),  # the mutex is acquired: opens a block
    (b"ntt_msm_h_ms", None),
    (b"batch_add_ms", None),
    (b"tail_msm_ms", b"gpu_total_ms"),  # the kernel region ends
    (b"prep_msm_ms", None),  # CPU prep thread: before its block's acquire line
    (b"barrier_wait_ms", None),
    (b"mutex_held_ms", b"total_start_fn_ms"),  # before the release
    (b"b_g2_msm_ms", b"num_circuits"),  # after the release
)
(
    CUZK_ACQUIRE, CUZK_NTT, CUZK_BATCH, CUZK_TAIL, CUZK_PREP, CUZK_BARRIER, CUZK_HELD, CUZK_BG2,
) = range(len(CUZK_FORMS))  # fmt: skip
CUZK_KEYS = tuple(first for first, _ in CUZK_FORMS)
CUZK_MALFORMED = -2  # one of our keys, damaged
GPU_TID = b"gpu_tid="

#: Why a line was skipped (``Session.skipped``).
SKIP_REASONS = (
    "malformed_timeline",
    "bad_number",
    "binary",
    "unknown_event",
    "duplicate_event",
    "gpu_end_before_start",
    "oversized_line",
    "cut_line",
    "malformed_cuzk_timing",
    "orphan_cuzk_timing",
    "cuzk_timing_misfit",
    "offset_out_of_order",
    "offset_outside_session",
)


def tables() -> dict[str, object]:
    """The tables a scanner must agree on, as ``_cscan.GRAMMAR`` reports them."""
    return {
        "record_starts": (TL, CZ),
        "markers": tuple((m.words, m.code, m.probe) for m in MARKERS),
        "events": EVENTS,
        "detail_keys": tuple((k.name, k.kind, k.digits) for k in DETAIL_KEYS),
        "cuzk_forms": CUZK_FORMS,
        "limits": (MAX_OFFSET_DIGITS, MAX_MS_DIGITS, MAX_ID_DIGITS, MAX_JOB, MAX_KIND),
    }


HEADER = Path(__file__).with_name("_grammar.h")


def c_header() -> str:
    """``_grammar.h``: the tables above as C declarations for ``_cscan.c``."""

    def s(b: bytes) -> str:
        return '"' + b.decode("ascii") + '"'

    def strings(items) -> str:
        return "{" + ", ".join("NULL" if b is None else s(b) for b in items) + "}"

    def ints(items) -> str:
        return "{" + ", ".join(str(i) for i in items) + "}"

    kinds = {"id": 0, "ms": 1, "text": 2, "flag": 3}
    written = [k.name + (b"" if k.kind == "flag" else b"=") for k in DETAIL_KEYS]
    daemon, worker = MARKERS
    lines = [
        "/* Generated by `python -m viewer.io.grammar` from viewer/io/grammar.py: do not edit. */",
        "#ifndef CUZK_GRAMMAR_H",
        "#define CUZK_GRAMMAR_H",
        f"#define TL {s(TL)}",
        f"#define TL_LEN {len(TL)}",
        f"#define CZ_PREFIX {s(CZ[: len(CZ) - len(CZ_TEXT)])}",
        f"#define CZ_PREFIX_LEN {len(CZ) - len(CZ_TEXT)}",
        f"#define CZ_TEXT {s(CZ_TEXT)}",
        f"#define CZ_TEXT_LEN {len(CZ_TEXT)}",
        f"#define DAEMON {s(daemon.words)}",
        f"#define DAEMON_PROBE {daemon.probe}",
        f"#define WORKER {s(worker.words)}",
        f"#define WORKER_PROBE {worker.probe}",
        f"enum {{ MARK_DAEMON = {MARK_DAEMON}, MARK_WORKER = {MARK_WORKER} }};",
        f"enum {{ N_EVENTS = {len(EVENTS)} }};",
        f"static const char *const EVENT_NAME[] = {strings(n for n, _ in EVENTS)};",
        f"static const int EVENT_CODE[] = {ints(c for _, c in EVENTS)};",
        f"static const size_t EVENT_LEN[] = {ints(len(n) for n, _ in EVENTS)};",
        f"enum {{ N_KEYS = {len(DETAIL_KEYS)} }};",
        "enum { KEY_ID = 0, KEY_MS = 1, KEY_TEXT = 2, KEY_FLAG = 3 };",
        "/* detail keys in their strict order: the name, and as written (with '=' unless a",
        " * flag); one text key and one flag key (HAS_KIND, MONO_WORD) */",
        f"static const char *const KEY_NAME[] = {strings(k.name for k in DETAIL_KEYS)};",
        f"static const char *const KEY[] = {strings(written)};",
        f"static const size_t KEY_LEN[] = {ints(len(w) for w in written)};",
        f"static const int KEY_KIND[] = {ints(kinds[k.kind] for k in DETAIL_KEYS)};",
        f"static const int KEY_DIGITS[] = {ints(k.digits for k in DETAIL_KEYS)};",
        f"enum {{ N_CUZK = {len(CUZK_FORMS)} }};",
        f"static const char *const CUZK_FIRST[] = {strings(a for a, _ in CUZK_FORMS)};",
        f"static const char *const CUZK_SECOND[] = {strings(b for _, b in CUZK_FORMS)};",
        f"#define GPU_TID {s(GPU_TID)}",
        f"#define GPU_TID_LEN {len(GPU_TID)}",
        f"enum {{ MAX_OFFSET_DIGITS = {MAX_OFFSET_DIGITS}, MAX_MS_DIGITS = {MAX_MS_DIGITS}, "
        f"MAX_ID_DIGITS = {MAX_ID_DIGITS} }};",
        f"enum {{ MAX_JOB = {MAX_JOB}, MAX_KIND = {MAX_KIND} }};",
        "#endif",
    ]
    return "\n".join(lines) + "\n"


def write_header() -> None:
    """Rewrite ``_grammar.h`` from the tables (then rebuild: ``pip install -e .``)."""
    HEADER.write_text(c_header())
