from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from viewer.annotations import (
    ENV_USER_DIR,
    MAX_ANNOTATIONS,
    MAX_SIDECAR_BYTES,
    SCHEMA,
    Annotation,
    AnnotationSet,
    UnusableSidecar,
    load,
    save,
    sidecar_path,
)
from viewer.export import files as files_mod


@pytest.fixture(autouse=True)
def user_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own per-user data folder and no forced fallback."""
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.delenv(ENV_USER_DIR, raising=False)
    return home / "cuzk-timeline-viewer" / "annotations"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "logs" / "run.log"
    path.parent.mkdir()
    path.write_text("TIMELINE,0,SYNTH_START,j,partition=0\n")
    return path


def _state(s: AnnotationSet) -> list[tuple]:
    return [(a.id, a.kind, a.t0_ms, a.t1_ms, a.lane, a.text) for a in s]


# ---- the model ------------------------------------------------------------------------------


def test_annotation_validation() -> None:
    with pytest.raises(ValueError, match="kind"):
        Annotation("a1", "circle", 0.0)
    with pytest.raises(ValueError, match="note has no t1_ms"):
        Annotation("a1", "note", 0.0, 5.0)
    with pytest.raises(ValueError, match="needs a finite t1_ms"):
        Annotation("a1", "range", 0.0)
    r = Annotation("a1", "range", 9.0, 2.0)
    assert (r.t0_ms, r.t1_ms) == (2.0, 9.0)  # ranges are stored in order
    arrow = Annotation("a2", "arrow", 9.0, 2.0)
    assert (arrow.t0_ms, arrow.t1_ms) == (9.0, 2.0)  # an arrow keeps its direction
    assert Annotation.from_dict(r.to_dict()) == r


def test_undo_redo_sequence() -> None:
    s = AnnotationSet()
    changes: list[int] = []
    s.subscribe(lambda: changes.append(len(s)))
    a = s.add("note", 100.0, text="cold start here")
    b = s.add("range", 200.0, 300.0, lane="GPU 0 · busy", text="gap")
    assert [x.id for x in s] == ["a1", "a2"]
    s.update(a.id, text="warm-up")
    s.move(b.id, 50.0)
    s.remove(a.id)
    assert _state(s) == [("a2", "range", 250.0, 350.0, "GPU 0 · busy", "gap")]
    assert s.undo_label == "Delete note"

    assert s.undo()  # delete
    assert [x.id for x in s] == ["a1", "a2"]  # back in its place
    assert s.get("a1").text == "warm-up"
    assert s.undo()  # move
    assert s.get("a2").t0_ms == 200.0
    assert s.undo()  # edit
    assert s.get("a1").text == "cold start here"
    assert s.undo() and s.undo()  # both adds
    assert len(s) == 0 and not s.can_undo and not s.undo()

    assert s.redo() and s.redo() and s.redo()
    assert s.get("a1").text == "warm-up" and s.get("a2").t0_ms == 200.0
    assert s.redo_label == "Move range"
    # A new change drops the redo branch.
    s.add("ruler", 0.0, 10.0)
    assert not s.can_redo and not s.redo()
    assert [x.id for x in s] == ["a1", "a2", "a3"]
    assert len(changes) == 14


def test_drag_merges_moves_into_one_undo_step() -> None:
    s = AnnotationSet()
    n = s.add("note", 0.0)
    for _ in range(10):
        s.move(n.id, 5.0, merge=True)
    s.move(n.id, 1.0, lane="GPU 1 · busy", merge=True)
    assert s.get(n.id).t0_ms == 51.0 and s.get(n.id).lane == "GPU 1 · busy"
    s.undo()
    assert s.get(n.id).t0_ms == 0.0 and s.get(n.id).lane is None
    s.redo()
    assert s.get(n.id).t0_ms == 51.0
    s.move(n.id, 1.0)  # not merged: its own step
    s.undo()
    assert s.get(n.id).t0_ms == 51.0


def test_ids_are_not_reused_after_undo_and_duplicates_rejected() -> None:
    s = AnnotationSet()
    s.add("note", 0.0)
    s.undo()
    assert s.add("note", 1.0).id == "a2"  # an undone id is not handed out again
    s.add("note", 2.0, id="mine")
    with pytest.raises(ValueError, match="duplicate"):
        s.add("note", 3.0, id="mine")
    with pytest.raises(KeyError, match="no annotation"):
        s.remove("nope")
    with pytest.raises(ValueError, match="id cannot change"):
        s.update("mine", id="x")


def test_queries_and_dirty_flag() -> None:
    s = AnnotationSet()
    assert not s.dirty
    s.add("note", 10.0, session=0)
    s.add("range", 50.0, 80.0, session=0)
    s.add("arrow", 500.0, 20.0, session=1)
    assert [a.kind for a in s.in_session(1)] == ["arrow"]
    assert len(s.in_session(0)) == 2
    assert s.dirty
    s.mark_saved()
    assert not s.dirty
    s.undo()
    assert s.dirty
    s.redo()
    assert not s.dirty


# ---- persistence ----------------------------------------------------------------------------


def test_missing_sidecar_is_an_empty_set(log: Path) -> None:
    s, warning = load(log)
    assert len(s) == 0 and warning is None


def test_round_trip_next_to_the_log(log: Path) -> None:
    s = AnnotationSet()
    s.add("note", 1.5, text="ünïcode ✓", lane="GPU 0 · worker 1")
    s.add("range", 10.0, 20.0, session=1)
    path = save(s, log)
    assert path == log.with_name("run.log.annotations.json") == sidecar_path(log)
    assert not s.dirty
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["schema"] == SCHEMA and doc["log"]["name"] == "run.log"
    back, warning = load(log)
    assert warning is None
    assert _state(back) == _state(s) and [a.session for a in back] == [0, 1]
    assert log.read_text() == "TIMELINE,0,SYNTH_START,j,partition=0\n"  # log untouched
    assert sorted(p.name for p in log.parent.iterdir()) == ["run.log", "run.log.annotations.json"]


@pytest.mark.parametrize("target", ["os.replace", "os.fsync"])
def test_failed_write_keeps_the_old_file(
    log: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    s = AnnotationSet()
    s.add("note", 1.0, text="old")
    path = save(s, log)
    before = path.read_bytes()
    s.add("note", 2.0, text="new")

    def boom(*args, **kwargs):
        raise OSError(28, "No space left on device")

    module, name = target.split(".")
    monkeypatch.setattr(getattr(files_mod, module), name, boom)
    with pytest.raises(OSError, match="No space"):
        save(s, log)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in log.parent.iterdir()) == ["run.log", "run.log.annotations.json"]
    assert s.dirty  # not saved
    assert [a.text for a in load(log)[0]] == ["old"]


def test_read_only_folder_falls_back_to_user_data(log: Path, user_data: Path) -> None:
    s = AnnotationSet()
    s.add("note", 1.0)
    os.chmod(log.parent, 0o555)
    try:
        path = save(s, log)
        if os.access(log.parent, os.W_OK):  # root ignores the mode: force the fallback
            path = save(s, log, user_dir=True)
    finally:
        os.chmod(log.parent, 0o755)
    assert path.parent == user_data and path.suffix == ".json"
    assert len(path.stem) == 32  # a hash of the log's absolute path
    assert len(load(log, user_dir=True)[0]) == 1


def test_fallback_forced_by_environment(
    log: Path, user_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_USER_DIR, "1")
    s = AnnotationSet()
    s.add("ruler", 1.0, 2.0)
    path = save(s, log)
    assert path.parent == user_data and path == sidecar_path(log)
    assert not log.with_name("run.log.annotations.json").exists()
    monkeypatch.delenv(ENV_USER_DIR)
    back, warning = load(log)  # found in the user folder when none is beside the log
    assert warning is None and [a.kind for a in back] == ["ruler"]


def test_write_refused_beside_the_log_falls_back(
    log: Path, user_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = files_mod.tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if Path(dir) == log.parent:
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(files_mod.tempfile, "mkstemp", mkstemp)
    s = AnnotationSet()
    s.add("note", 1.0)
    assert save(s, log).parent == user_data


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"schema": "something-else/1", "annotations": []}), "schema"),
        (
            json.dumps({"schema": SCHEMA, "log": {"name": "other.log"}, "annotations": []}),
            "another log",
        ),
        (
            json.dumps(
                {
                    "schema": SCHEMA,
                    "log": {"name": "run.log"},
                    "annotations": [{"id": "a1", "kind": "note"}],
                }
            ),
            "bad annotation",
        ),
    ],
)
def test_unusable_sidecar_is_reported_and_kept_until_the_user_chooses(
    log: Path, content: str, problem: str
) -> None:
    side = log.with_name("run.log.annotations.json")
    side.write_text(content)
    s, warning = load(log)
    assert len(s) == 0
    assert warning is not None and str(side) in warning and problem in warning
    assert "kept as it is" in warning
    assert side.read_text() == content  # in place, untouched
    s.add("note", 3.0)
    with pytest.raises(UnusableSidecar) as err:
        save(s, log)  # no user choice yet: never written over
    assert err.value.path == side and problem in err.value.problem
    assert side.read_text() == content and s.dirty
    assert sorted(p.name for p in log.parent.iterdir()) == ["run.log", side.name]
    # The user chose to replace it: the old file is moved aside, never deleted.
    assert save(s, log, replace=True) == side
    aside = list(log.parent.glob("run.log.annotations.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text() == content
    assert len(load(log)[0]) == 1


def test_save_never_overwrites_a_foreign_file(log: Path) -> None:
    side = log.with_name("run.log.annotations.json")
    side.write_text("precious")
    with pytest.raises(UnusableSidecar):
        save(AnnotationSet(), log)
    assert side.read_text() == "precious"


def _doc(*entries: object, name: str = "run.log") -> str:
    return json.dumps({"schema": SCHEMA, "log": {"name": name}, "annotations": list(entries)})


NOTE = {"id": "a1", "kind": "note", "t0_ms": 1.0}
HOSTILE_SIDECARS = {
    "deep JSON": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "deep JSON inside": (
        _doc({**NOTE, "text": "x"}).replace('"x"', "[" * 50_000 + "]" * 50_000),
        "nested too deeply",
    ),  # noqa: E501
    "1e400 session": (
        _doc(NOTE).replace('"t0_ms": 1.0', '"t0_ms": 1.0, "session": 1e400'),
        "session",
    ),  # noqa: E501
    "1e400 time": (_doc(NOTE).replace('"t0_ms": 1.0', '"t0_ms": 1e400'), "t0_ms"),
    "huge int time": (_doc(NOTE).replace('"t0_ms": 1.0', '"t0_ms": ' + "9" * 400), "t0_ms"),
    "5000-digit int": (
        _doc(NOTE).replace('"t0_ms": 1.0', '"t0_ms": ' + "9" * 5000),
        "not valid JSON",
    ),  # noqa: E501
    "NaN time": (_doc(NOTE).replace('"t0_ms": 1.0', '"t0_ms": NaN'), "t0_ms"),
    "negative session": (_doc({**NOTE, "session": -1}), "session"),
    "text too long": (_doc({**NOTE, "text": "x" * 20_000}), "characters long"),
    "id is a list": (_doc({**NOTE, "id": [1]}), "id"),
    "too many": (
        _doc(*({**NOTE, "id": f"a{i}"} for i in range(MAX_ANNOTATIONS + 1))),
        f"at most {MAX_ANNOTATIONS}",
    ),  # noqa: E501
    "not UTF-8": (b"\xff\xfe{}", "not UTF-8"),
}


@pytest.mark.parametrize("case", HOSTILE_SIDECARS)
def test_hostile_sidecars_give_a_message_and_stay(log: Path, case: str) -> None:
    content, problem = HOSTILE_SIDECARS[case]
    side = log.with_name("run.log.annotations.json")
    side.write_bytes(content if isinstance(content, bytes) else content.encode())
    before = side.read_bytes()
    s, warning = load(log)
    assert len(s) == 0 and warning is not None
    assert str(side) in warning and problem in warning, warning
    assert side.read_bytes() == before


def test_a_million_annotations_are_refused_unread(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    side = log.with_name("run.log.annotations.json")
    entry = json.dumps(NOTE)
    body = ",".join([entry] * 1_000_000)
    side.write_text(
        f'{{"schema": "{SCHEMA}", "log": {{"name": "run.log"}}, "annotations": [{body}]}}'
    )
    assert side.stat().st_size > MAX_SIDECAR_BYTES

    def no_parse(*args, **kwargs):
        raise AssertionError("a sidecar over the size limit must not be parsed")

    monkeypatch.setattr(json, "loads", no_parse)
    s, warning = load(log)
    assert len(s) == 0 and f"at most {MAX_SIDECAR_BYTES >> 20} MB" in warning


@pytest.mark.parametrize("kind", ["fifo", "directory", "symlink loop", "link to /dev/zero"])
def test_a_sidecar_that_is_no_regular_file_is_never_opened(log: Path, kind: str) -> None:
    side = log.with_name("run.log.annotations.json")
    if kind == "fifo":
        os.mkfifo(side)
    elif kind == "directory":
        side.mkdir()
    elif kind == "symlink loop":
        side.symlink_to(side)
    else:
        side.symlink_to("/dev/zero")
    s, warning = load(log)  # a FIFO or /dev/zero opened for reading would hang here
    assert len(s) == 0 and str(side) in warning
    s.add("note", 1.0)
    with pytest.raises(UnusableSidecar):
        save(s, log)
    assert os.path.lexists(side) and not side.is_file() or kind == "link to /dev/zero"


@pytest.mark.parametrize("link", ["hard link", "symlink"])
def test_a_sidecar_linked_to_the_log_never_changes_the_log(log: Path, link: str) -> None:
    side = log.with_name("run.log.annotations.json")
    os.link(log, side) if link == "hard link" else side.symlink_to(log)
    before = log.read_bytes()
    s = AnnotationSet()
    s.add("note", 1.0)
    assert load(log)[1] is not None  # the log is no annotations file
    with pytest.raises(UnusableSidecar):
        save(s, log)
    save(s, log, replace=True)  # the user chose: the link is moved aside, the log stays
    assert log.read_bytes() == before and len(load(log)[0]) == 1


@pytest.mark.parametrize("user_dir", [False, True])
def test_a_log_name_that_is_not_utf8(tmp_path: Path, user_dir: bool) -> None:
    log = tmp_path / os.fsdecode(b"bad\xff.log")
    log.write_text("TIMELINE,0,SYNTH_START,j,partition=0\n")
    s = AnnotationSet()
    s.add("note", 1.0, text="on a badly named log")
    path = save(s, log, user_dir=user_dir)
    back, warning = load(log, user_dir=user_dir)
    assert warning is None and [a.text for a in back] == ["on a badly named log"]
    assert path.exists() and log.read_text().startswith("TIMELINE")


def test_an_arrow_may_point_into_another_lane_and_old_sidecars_still_read() -> None:
    a = Annotation("a1", "arrow", 10.0, 20.0, lane="GPU 0 · worker 1", head_lane="GPU 0 · busy")
    d = a.to_dict()
    assert d["head_lane"] == "GPU 0 · busy" and Annotation.from_dict(d) == a
    flat = Annotation("a2", "arrow", 10.0, 20.0, lane="GPU 0 · worker 1")
    assert "head_lane" not in flat.to_dict()  # what an older viewer writes and reads
    assert Annotation.from_dict(flat.to_dict()).head_lane is None
    # only an arrow has a head; a bad one is refused like any other field
    note = {"id": "n", "kind": "note", "t0_ms": 1.0, "head_lane": "x"}
    assert Annotation.from_dict(note).head_lane is None
    with pytest.raises(ValueError, match="head_lane must be a string"):
        Annotation.from_dict({**d, "head_lane": 5})


SAMPLES = Path(__file__).resolve().parents[1] / "sample_logs"


def test_a_bundled_sample_keeps_its_notes_in_the_user_folder(user_data: Path) -> None:
    sample = SAMPLES / "two_gpus.log"
    beside = sample.with_name(sample.name + ".annotations.json")
    assert not beside.exists()
    assert sidecar_path(sample).parent == user_data  # decided before anything is written
    s = AnnotationSet()
    s.add("note", 5.0, text="warm-up")
    try:
        path = save(s, sample)
    finally:
        if beside.exists():  # never leave a note in the checkout, even when this fails
            beside.unlink()
            pytest.fail("the sample's notes were written into sample_logs/")
    assert path.parent == user_data
    back, warning = load(sample)  # read back from there when the sample is opened again
    assert warning is None and [a.text for a in back] == ["warm-up"]


def test_a_copy_of_a_sample_elsewhere_keeps_its_notes_beside_it(log: Path) -> None:
    copy = log.with_name("two_gpus.log")
    copy.write_bytes((SAMPLES / "two_gpus.log").read_bytes())
    assert sidecar_path(copy) == copy.with_name("two_gpus.log.annotations.json")
