from __future__ import annotations

import argparse
import json
import os
import stat
from pathlib import Path

import pytest

from tests.hostile.files import drained_fifo
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
    assert run("run.log", "--out", md, "--table", table, "--session", "1") == 0
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
    assert "range 1:04.000" in image.text("Description")
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


# ---- never over an input (issue 13, item 1) -------------------------------------------------

#: Every output format, as the name the input log is given: `export LOG --out LOG`.
SELF_OUTPUTS = {
    "trace": ("run.json", []),
    "markdown": ("run.md", []),
    "csv": ("run.csv", ["--table", "gaps"]),
    "table markdown": ("run.md", ["--table", "jobs"]),
    "trace by --format": ("run.log", ["--format", "trace"]),
    "png": ("run.png", ["--width", "400"]),
    "svg": ("run.svg", ["--width", "400"]),
}


@pytest.mark.parametrize("fmt", SELF_OUTPUTS)
@pytest.mark.parametrize("how", ["same path", "symlink", "hard link"])
def test_the_input_is_never_the_output(qapp, tmp_path: Path, capsys, fmt: str, how: str) -> None:
    name, extra = SELF_OUTPUTS[fmt]
    log = tmp_path / name
    log.write_bytes(SAMPLE.read_bytes())
    out = log
    if how != "same path":
        out = tmp_path / f"out{log.suffix}"
        out.symlink_to(log) if how == "symlink" else os.link(log, out)
    assert run(log, "--out", out, *extra) == 2
    err = capsys.readouterr().err
    assert f"refusing to write over the input {log}" in err and "Traceback" not in err
    assert log.read_bytes() == SAMPLE.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({log.name, out.name})


def test_the_annotations_file_is_an_input_too(qapp, tmp_path: Path, capsys) -> None:
    notes = _note_file(tmp_path)
    svg = tmp_path / "notes.svg"
    os.link(notes, svg)
    before = notes.read_bytes()
    assert run(SAMPLE, "--out", svg, "--annotations", notes) == 2
    assert "refusing to write over the input" in capsys.readouterr().err
    assert notes.read_bytes() == before


@pytest.mark.parametrize("suffix", [".json", ".md", ".png"])
def test_fifo_and_folder_outputs_are_refused(qapp, tmp_path: Path, capsys, suffix: str) -> None:
    fifo, folder = tmp_path / f"pipe{suffix}", tmp_path / f"dir{suffix}"
    with drained_fifo(fifo) as received:  # a writer that opens it gets drained, not stuck
        assert run(SAMPLE, "--out", fifo) == 2
    assert f"{fifo} is a FIFO (named pipe), not a regular file" in capsys.readouterr().err
    assert received == []
    folder.mkdir()
    assert run(SAMPLE, "--out", folder) == 2
    assert f"{folder} is a directory" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and folder.is_dir()


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_a_device_output_is_refused_as_root(tmp_path: Path, capsys) -> None:
    null = tmp_path / "null.json"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    assert run(SAMPLE, "--out", null) == 2
    assert "character device" in capsys.readouterr().err
    assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_a_planted_temp_symlink_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "t.json"
    (tmp_path / ".t.json.tmp").symlink_to(victim)
    assert run(SAMPLE, "--out", out) == 0
    assert victim.read_text() == "precious" and json.loads(out.read_text())["traceEvents"]


def test_an_existing_output_keeps_its_mode(tmp_path: Path) -> None:
    out = tmp_path / "t.md"
    out.write_text("old")
    out.chmod(0o604)
    assert run(SAMPLE, "--out", out) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o604 and out.read_text().startswith("# ")


# ---- bounded sizes (issue 13, item 10) ------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "option", "allowed"),
    [
        (["--height", "1000000000"], "--height", "from 150 to 20000"),
        (["--height", "0"], "--height", "from 150 to 20000"),
        (["--height", "-5"], "--height", "from 150 to 20000"),
        (["--width", "1000000000"], "--width", "from 200 to 20000"),
        (["--width", "nan"], "--width", "from 200 to 20000"),
        (["--scale", "nan"], "--scale", "from 0.5 to 8"),
        (["--scale", "inf"], "--scale", "from 0.5 to 8"),
        (["--scale", "1e300"], "--scale", "from 0.5 to 8"),
    ],
)
def test_image_sizes_are_bounded(tmp_path: Path, capsys, argv, option, allowed) -> None:
    with pytest.raises(SystemExit) as exit_:
        run(SAMPLE, "--out", tmp_path / "x.png", *argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}" in err and allowed in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_the_pixel_budget_names_the_options(tmp_path: Path, capsys) -> None:
    argv = ["--width", "4000", "--height", "4000", "--scale", "2"]  # 16 M px, 64 M device px
    assert run(SAMPLE, "--out", tmp_path / "x.png", *argv) == 2
    err = capsys.readouterr().err
    assert "--width x --height x --scale" in err and "million" in err
    assert run(SAMPLE, "--out", tmp_path / "x.svg", "--width", "20000", "--height", "20000") == 2
    assert "--width x --height" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_a_tall_log_is_cut_to_the_budget_with_a_note(qapp, tmp_path: Path, capsys) -> None:
    """Thousands of worker lanes would ask for an image taller than any bound."""
    from viewer.export.files import write_output

    lines = []
    for w in range(3000):
        t = 1000 + 10 * w
        lines += [
            f"TIMELINE,{t},GPU_START,job{w},worker={w},partition=0",
            f"TIMELINE,{t + 5},GPU_END,job{w},worker={w},partition=0,gpu_ms=5",
        ]
    log = write_output(tmp_path / "wide.log", "\n".join(lines) + "\n")
    out = tmp_path / "wide.png"
    assert run(log, "--out", out, "--width", "400", "--scale", "1") == 0
    from PySide6 import QtGui

    image = QtGui.QImage(str(out))
    assert 0 < image.height() <= 20000 and image.width() == 400
    assert "cut" in capsys.readouterr().err


def test_an_image_is_written_where_the_display_named_is_gone(tmp_path) -> None:  # noqa: ANN001
    """DISPLAY names an X server that is not there (a stale ssh session): Qt aborted the
    export (exit 134); the page is painted offscreen, needing no display."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env["DISPLAY"] = ":97"
    out = tmp_path / "run.png"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "viewer",
            "export",
            str(root / "sample_logs/phase8_pw20.log"),
            "--out",
            str(out),
        ],
        env=env,
        capture_output=True,
        timeout=120,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-500:]
    assert out.read_bytes().startswith(b"\x89PNG")
