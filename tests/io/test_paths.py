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


def test_broken_links_in_a_folder_are_named_and_the_rest_read(tmp_path: Path) -> None:
    """issue 27 item 18: a dangling symlink and a symlink loop among a folder's logs were
    skipped without a word."""
    (tmp_path / "a.log").write_text("")
    (tmp_path / "dangling.log").symlink_to("gone.log")
    (tmp_path / "loop.log").symlink_to("loop.log")
    (tmp_path / "other.md").symlink_to("gone.md")  # not a log name: nothing to say
    notes: list[str] = []
    assert [p.name for p in expand_paths([tmp_path], notes=notes)] == ["a.log"]
    assert notes == [
        f"skipped {tmp_path / 'dangling.log'}: dangling symlink (to gone.log)",
        f"skipped {tmp_path / 'loop.log'}: symlink loop",
    ]


def test_a_log_reached_twice_is_listed_once_as_first_named(tmp_path: Path, monkeypatch) -> None:
    """A folder named twice (another spelling, a glob reaching it again), a file and a link
    to it: each log once, in the first spelling, and the duplicates counted."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("p1.log", "p2.log"):
        (logs / name).write_text("")
    (tmp_path / "link.log").symlink_to(logs / "p1.log")
    monkeypatch.chdir(tmp_path)
    notes: list[str] = []
    # duplicates: the folder again 2, the glob 3 (link.log and the folder), link.log 1, p2 1
    named = ["logs", f"{logs}/", str(tmp_path / "l*"), "link.log", "./logs/p2.log"]
    got = expand_paths(named, globs=True, notes=notes)
    assert got == [Path("logs/p1.log"), Path("logs/p2.log")]
    assert notes == [
        "dropped 7 duplicates: the same log reached again (another spelling, a link, or a "
        "folder or glob named twice) is read once"
    ]
    assert expand_paths(["logs"], notes=notes) and len(notes) == 1  # no duplicate, no note
