from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from viewer.commands import export
from viewer.export.report import report_markdown
from viewer.export.tables import TABLES

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    export.add_parser(sub, "export")
    return export.run(parser.parse_args(["export", *map(str, argv)]))


def test_trace_to_file(fake_reader: dict, tmp_path: Path, capsys) -> None:
    out = tmp_path / "run.trace.json"
    assert run("run.log", "--out", out, "--workers-per-gpu", "2", "--range", "0:50000") == 0
    d = json.loads(out.read_text())
    assert d["metadata"]["range_ms"] == [0, 50000]
    assert any(e["ph"] == "X" for e in d["traceEvents"])
    assert fake_reader["workers_per_gpu"] == 2
    assert "perfetto" in capsys.readouterr().err


def test_trace_to_stdout_without_flows(fake_reader: dict, capsys) -> None:
    assert run("run.log", "--out", "-", "--format", "trace", "--no-flows") == 0
    d = json.loads(capsys.readouterr().out)
    assert not {e["ph"] for e in d["traceEvents"]} & {"s", "f"}


def test_markdown_is_the_report(tmp_path: Path) -> None:
    from viewer.io import open_log

    out = tmp_path / "report.md"
    assert run(SAMPLE, "--out", out) == 0
    assert out.read_text(encoding="utf-8") == report_markdown(open_log(SAMPLE))


@pytest.mark.parametrize("table", TABLES)
def test_tables_csv_and_markdown(fake_reader: dict, tmp_path: Path, table: str) -> None:
    out = tmp_path / f"{table}.csv"
    assert run("run.log", "--out", out, "--table", table) == 0
    assert out.read_text().splitlines()[0].startswith("session,")
    md = tmp_path / f"{table}.md"
    assert run("run.log", "--out", md, "--table", table, "--session", "0") == 0
    assert md.read_text().startswith("| session |")


def _note_file(tmp_path: Path, log_name: str = SAMPLE.name) -> Path:
    from viewer.annotations import SCHEMA

    path = tmp_path / "notes.json"
    note = {"id": "a1", "kind": "note", "t0_ms": 70000.0, "text": "cold <start>", "session": 0}
    path.write_text(
        json.dumps({"schema": SCHEMA, "log": {"name": log_name}, "annotations": [note]})
    )
    return path


def test_png_headless_at_2x_the_given_size(qapp, tmp_path: Path, capsys) -> None:
    from PySide6 import QtGui

    out = tmp_path / "shot.png"
    argv = ["--width", "900", "--height", "500", "--caption", "--range", "64000:84000"]
    assert run(SAMPLE, "--out", out, *argv) == 0
    image = QtGui.QImage(str(out))
    assert (image.width(), image.height()) == (1800, 1000)
    assert "range 64.000 s" in image.text("Description")
    assert "wrote" in capsys.readouterr().err


def test_svg_headless_with_annotations_file(qapp, tmp_path: Path) -> None:
    out = tmp_path / "shot.SVG"
    notes = _note_file(tmp_path)
    assert run(SAMPLE, "--out", out, "--width", "1000", "--caption", "--annotations", notes) == 0
    svg = out.read_text(encoding="utf-8")
    assert 'viewBox="0 0 1000 ' in svg
    assert "cold &lt;start&gt;" in svg and "37.4 s/proof" in svg


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--table", "gaps"], "not images"),
        (["--width", "50"], "--width"),
        (["--annotations", "missing.json"], "cannot read"),
    ],
)
def test_image_option_errors(tmp_path: Path, capsys, argv, message) -> None:
    argv = [str(tmp_path / a) if a.endswith(".json") else a for a in argv]
    assert run(SAMPLE, "--out", tmp_path / "x.png", *argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run.log", "--out", "x.txt"], "cannot tell the format"),
        (["run.log", "--out", "x.out", "--format", "csv"], "needs --table"),
        (["run.log", "--out", "x.json", "--table", "gaps"], "not with a trace"),
        (["x.bad", "--out", "x.json"], "not a cuzk log"),
        (["run.log", "--out", "x.json", "--session", "4"], "no session 4"),
    ],
)
def test_errors_exit_2(fake_reader: dict, tmp_path: Path, capsys, argv, message) -> None:
    argv = [str(tmp_path / a) if a.startswith("x.") else a for a in argv]
    assert run(*argv) == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_unwritable_output(fake_reader: dict, tmp_path: Path, capsys) -> None:
    assert run("run.log", "--out", tmp_path / "missing" / "r.md") == 2
    assert "cannot write" in capsys.readouterr().err
    assert run("run.log", "--out", tmp_path / "missing" / "t.json") == 2
    assert "cannot write" in capsys.readouterr().err
