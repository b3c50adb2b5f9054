"""io.paths: the one list of log suffixes and the one expansion of what a person named."""

from __future__ import annotations

from pathlib import Path

from viewer.io.paths import DIALOG_FILTER, LOG_SUFFIXES, expand_paths, suffix_list


def test_a_folder_gives_its_logs_sorted_and_files_stay_as_named(tmp_path: Path) -> None:
    for name in ("b.log", "a.log.gz", "c.zst", "d.out", "e.err", "f.txt", "notes.md", "x.json"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub.log").mkdir()  # a folder named like a log is not a log
    other = tmp_path / "named.anything"
    other.write_text("")
    got = expand_paths([tmp_path, other])
    names = [p.name for p in got]
    assert names == ["a.log.gz", "b.log", "c.zst", "d.out", "e.err", "f.txt", "named.anything"]


def test_globs_only_where_asked_and_a_pattern_matching_nothing_stays(tmp_path: Path) -> None:
    for name in ("p1.log", "p2.log", "q.log"):
        (tmp_path / name).write_text("")
    pattern = str(tmp_path / "p*.log")
    assert [p.name for p in expand_paths([pattern], globs=True)] == ["p1.log", "p2.log"]
    assert expand_paths([pattern]) == [Path(pattern)]  # the window takes names literally
    missing = str(tmp_path / "none*.log")
    assert expand_paths([missing], globs=True) == [Path(missing)]


def test_the_dialog_filter_and_messages_name_every_suffix() -> None:
    for suffix in LOG_SUFFIXES:
        assert f"*{suffix}" in DIALOG_FILTER and suffix in suffix_list()
    assert suffix_list().endswith(" or .zst")
