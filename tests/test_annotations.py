from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from viewer import annotations as ann_mod
from viewer.annotations import (
    ENV_USER_DIR,
    SCHEMA,
    Annotation,
    AnnotationSet,
    load,
    save,
    sidecar_path,
)


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
    assert [a.t0_ms for a in s.in_range(0, 60.0, 100.0)] == [50.0]
    assert [a.kind for a in s.in_range(1, 100.0, 200.0)] == ["arrow"]
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


@pytest.mark.parametrize("target", ["json.dump", "os.replace", "os.fsync"])
def test_failed_write_keeps_the_old_file(
    log: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    s = AnnotationSet()
    s.add("note", 1.0, text="old")
    path = save(s, log)
    before = path.read_bytes()
    s.add("note", 2.0, text="new")

    def boom(*args, **kwargs):
        if target == "json.dump":  # fail midway through the data
            args[1].write('{"schema": "cuzk-timel')
        raise OSError(28, "No space left on device")

    module, name = target.split(".")
    monkeypatch.setattr(getattr(ann_mod, module), name, boom)
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
    real = ann_mod.tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if Path(dir) == log.parent:
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(ann_mod.tempfile, "mkstemp", mkstemp)
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
def test_corrupt_sidecar_is_moved_aside_and_reported(log: Path, content: str, problem: str) -> None:
    side = log.with_name("run.log.annotations.json")
    side.write_text(content)
    s, warning = load(log)
    assert len(s) == 0
    assert warning is not None and str(side) in warning and problem in warning
    aside = list(log.parent.glob("run.log.annotations.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text() == content
    assert not side.exists()
    # Saving now writes a fresh sidecar; the moved-aside copy stays.
    s.add("note", 3.0)
    save(s, log)
    assert aside[0].read_text() == content and len(load(log)[0]) == 1


def test_save_never_overwrites_a_foreign_file(log: Path) -> None:
    side = log.with_name("run.log.annotations.json")
    side.write_text("precious")
    save(AnnotationSet(), log)
    aside = list(log.parent.glob("run.log.annotations.json.corrupt-*"))
    assert [p.read_text() for p in aside] == ["precious"]
    assert json.loads(side.read_text())["schema"] == SCHEMA
