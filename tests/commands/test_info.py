"""`python -m viewer info`: text, JSON and bad files."""

from __future__ import annotations

import json
import subprocess
import sys

from viewer.cli import main

LOG = "\n".join(
    [
        "2026-02-19T01:00:00Z INFO cuzk_daemon: cuzk-daemon starting",
        "TIMELINE,10,SYNTH_START,job-a,partition=0",
        "TIMELINE,20,SYNTH_END,job-a,partition=0,synth_ms=10",
        "TIMELINE,21,GPU_QUEUE,job-a,partition=0",
        "TIMELINE,22,GPU_PICKUP,job-a,worker=1,partition=0",
        "TIMELINE,23,GPU_START,job-a,worker=1,partition=0",
        "TIMELINE,99,GPU_WAT,job-a,worker=1,partition=0",
    ]
)


def test_json(tmp_path, capsys):
    path = tmp_path / "run.log"
    path.write_text(LOG + "\n")
    assert main(["info", "--json", "--workers-per-gpu", "2", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "sessions": [
            {
                "session": 1,
                "index": 0,
                "events": 5,
                "skipped": {"unknown_event": 1},
                "jobs": 1,
                "partitions": 1,
                "gpus": {"0": [1]},
                "open_intervals": 1,
                "start_ms": 10,
                "end_ms": 23,
            }
        ]
    }


def test_text(tmp_path, capsys):
    path = tmp_path / "run.log"
    path.write_text(LOG + "\n")
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "events accepted   5" in out and "unknown_event: 1" in out
    assert "GPU 0: workers 1" in out and "open intervals    1" in out


def test_bad_file_exit_2_no_traceback(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    proc = subprocess.run(
        [sys.executable, "-m", "viewer", "info", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert "notes.txt: no TIMELINE lines found" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_help_mentions_json_and_workers(capsys):
    try:
        main(["info", "--help"])
    except SystemExit as exc:
        assert exc.code == 0
    out = capsys.readouterr().out
    assert "--json" in out and "--workers-per-gpu" in out and "session" in out


def test_sessions_are_written_one_at_a_time_as_one_text(tmp_path, capsys):
    """The text and the JSON are written a session at a time, each session's tables let
    go once it is (30 000 daemon restarts: 247 -> 75 MB above the interpreter): the JSON
    the same as the whole made at once, the text each session's block in order."""
    from pathlib import Path

    from viewer.analysis.cache import made
    from viewer.commands.info import json_pieces, session_summary, text_pieces
    from viewer.io import open_log

    path = tmp_path / "three.log"
    path.write_text("\n".join([LOG] * 3) + "\n")  # three daemon runs
    sessions = open_log(path).sessions
    assert len(sessions) == 3
    summaries = [session_summary(s) for s in sessions]
    want_json = json.dumps({"sessions": summaries}, indent=2) + "\n"
    blocks = [
        f"\n\nsession {k}\n  events accepted   5\n  skipped lines     1 (unknown_event: 1)"
        for k in (1, 2, 3)
    ]
    fresh = open_log(path).sessions
    assert "".join(json_pieces(str(path), fresh)) == want_json
    assert all(not made(s) for s in fresh)
    want_text = "".join(text_pieces(str(path), fresh))
    assert want_text.startswith(f"{path}: 3 session(s)\n\nsession 1\n")
    assert [want_text.index(b) for b in blocks] == sorted(want_text.index(b) for b in blocks)
    assert want_text.count("\nsession ") == 3 and want_text.endswith("\n")
    assert "".join(json_pieces("x", [])) == json.dumps({"sessions": []}, indent=2) + "\n"
    assert main(["info", str(path)]) == 0
    assert capsys.readouterr().out == want_text
    assert Path(path).read_text().count("cuzk-daemon starting") == 3  # (unchanged input)
