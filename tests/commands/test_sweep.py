"""`python -m viewer sweep LOG...`: the table, the JSON, the chart and the other files, and
every way the logs or the options can be wrong."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from viewer.cli import main

SECOND = Path(__file__).resolve().parents[1] / "whatif" / "data" / "h200_second"
LOGS = sorted(str(p) for p in SECOND.glob("*.log.gz"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["sweep", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_table_names_the_best_and_what_was_set_apart(capsys) -> None:  # noqa: ANN001
    code, out, err = run(capsys, *LOGS, "--ram-gib", "512")
    assert code == 0, err
    assert "Sweep of partition workers: 4 runs" in out
    assert "best (measured): pw 12, 2.39 s/proof" in out
    assert "best region (measured, within 5 % of the best): pw 8-12" in out
    assert "best within 512 GiB: pw 8" in out
    assert "not in the sweep: " in out and "gw3.log.gz: differs in gw 3 (the others: gw 2)" in out
    assert "predicted from " in out and "base8.log.gz against measured: 6 " in out


def test_json_has_the_format_the_issue_gives(capsys) -> None:  # noqa: ANN001
    code, out, _ = run(capsys, *LOGS, "--json", "--values", "6,8,12,24,32", "--ram-gib", "512")
    assert code == 0
    d = json.loads(out)
    assert d["format"] == "cuzk-timeline-sweep/1"
    assert d["knob"] == "pw"
    assert d["best"] == {
        "value": 12.0,
        "s_per_proof": pytest.approx(2.39, abs=0.01),
        "from": "measured",
    }
    assert d["best_within_ram"]["value"] == 8.0
    values = [r["value"] for r in d["rows"]]
    assert values == [6, 8, 12, 24, 32]
    last = d["rows"][-1]
    assert last["log"] is None and last["measured"] is None
    assert last["predicted"]["beyond_logs"] is True
    lo, hi = last["predicted"]["band"]
    assert lo <= last["predicted"]["s_per_proof"] <= hi
    m_lo, m_hi = last["predicted"]["memory_gib"]
    assert 0 < m_lo <= m_hi
    measured = d["rows"][0]["measured"]
    assert set(measured) == {"s_per_proof", "wall_s_per_proof"}
    assert measured["wall_s_per_proof"] > measured["s_per_proof"]


@pytest.mark.parametrize("suffix", [".png", ".svg", ".md", ".csv", ".json", ".txt"])
def test_every_output_kind_is_written(capsys, tmp_path, suffix) -> None:  # noqa: ANN001
    out_path = tmp_path / f"sweep{suffix}"
    code, _, err = run(capsys, *LOGS, "--out", str(out_path))
    assert code == 0, err
    data = out_path.read_bytes()
    head = {
        ".png": b"\x89PNG",
        ".svg": b"<?xml",
        ".md": b"## Sweep",
        ".csv": b"knob,value,log",
        ".json": b"{",
        ".txt": b"Sweep of",
    }[suffix]
    assert data.startswith(head)
    if suffix == ".svg":
        assert b"partition workers" in data and b"best: pw 12" in data  # text as text
    if suffix == ".csv":
        rows = data.decode().splitlines()
        assert len(rows) == 1 + 7 and rows[1].startswith("pw,6.0,")


def test_the_output_never_replaces_an_input_or_its_notes(capsys, tmp_path) -> None:  # noqa: ANN001
    log = tmp_path / "a.log.gz"
    log.write_bytes(Path(LOGS[0]).read_bytes())
    before = log.read_bytes()
    notes = tmp_path / "a.log.gz.annotations.json"
    for target in (log, notes):
        code, _, err = run(capsys, str(log), *LOGS[1:], "--out", str(target))
        assert code == 2, target
        assert "sweep:" in err and "Traceback" not in err
    assert log.read_bytes() == before
    assert not notes.exists()


def test_an_unknown_output_kind_is_refused(capsys, tmp_path) -> None:  # noqa: ANN001
    code, _, err = run(capsys, *LOGS, "--out", str(tmp_path / "chart.pdf"))
    assert code == 2 and "give a .png, .svg, .md, .csv, .json or .txt file" in err


def test_one_log_without_values_says_what_to_do(capsys) -> None:  # noqa: ANN001
    code, _, err = run(capsys, LOGS[0])
    assert code == 2 and "one log only" in err and "--values" in err


def test_one_log_with_values_predicts(capsys) -> None:  # noqa: ANN001
    code, out, err = run(capsys, LOGS[0], "--values", "4,16", "--json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert [r["value"] for r in rows] == [4, 8, 16]
    assert rows[0]["predicted"]["beyond_logs"] and rows[2]["predicted"]["beyond_logs"]


def test_a_log_given_twice_is_read_once_and_said(capsys) -> None:  # noqa: ANN001
    """As `report` reads the logs it is named: the same log twice is one run, not two."""
    code, _, err = run(capsys, LOGS[0], LOGS[0])
    assert code == 2 and "sweep: dropped 1 duplicate" in err and "one log only" in err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--values", "8,nan"], "pw must be a whole number"),
        (["--values", "8,1e300"], "pw must be a whole number"),
        (["--values", "8,x"], "numbers separated by commas"),
        (["--ram-gib", "nan"], "--ram-gib"),
        (["--ram-gib", "1e300"], "--ram-gib"),
        (["--partition-gib", "20,10"], "LOW must not exceed HIGH"),
        (["--knob", "gw"], "do not differ in GPU workers"),
        (["--base", "nowhere.log"], "--base nowhere.log is not one of the swept runs"),
    ],
)
def test_bad_options_get_a_clear_message(capsys, argv, words) -> None:  # noqa: ANN001
    logs = [p for p in LOGS if "gw3" not in p] if argv[:2] == ["--knob", "gw"] else LOGS
    try:
        code = main(["sweep", *logs, *argv])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert words in err
    assert "Traceback" not in err


def test_an_unreadable_log_is_named(capsys, tmp_path) -> None:  # noqa: ANN001
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    code, _, err = run(capsys, LOGS[0], str(fifo))
    assert code == 2 and "pipe.log" in err


def _plain(tmp_path: Path, name: str, *sources: str) -> Path:
    """A plain log of the runs in ``sources`` one after the other (one daemon session
    each)."""
    import gzip

    path = tmp_path / name
    path.write_bytes(b"".join(gzip.decompress(Path(s).read_bytes()) for s in sources))
    return path


def test_a_log_of_two_sessions_is_swept_at_the_settings_of_the_session_swept(
    capsys, tmp_path
) -> None:  # noqa: ANN001
    """The head states the first run's pw (24); the session swept is the second (pw 6, as
    many GPU calls: the later one): its row is pw 6, not pw 24 with pw 6's s/proof."""
    pw6 = next(p for p in LOGS if p.endswith("/pw6.log.gz"))
    pw24 = next(p for p in LOGS if p.endswith("/pw24.log.gz"))
    both = _plain(tmp_path, "both.log", pw24, pw6)
    others = [p for p in LOGS if "base8" in p or "pw12" in p]
    code, out, err = run(capsys, str(both), *others, "--json")
    assert code == 0, err
    d = json.loads(out)
    row = next(r for r in d["rows"] if r["log"] and r["log"].endswith("both.log"))
    assert row["value"] == 6
    assert any("both.log: 2 daemon sessions; session 2" in n for n in d["notes"])


def test_base_is_the_log_whatever_its_spelling(capsys) -> None:  # noqa: ANN001
    """--base ./x, an absolute path or a link names the log given as x."""
    pw24 = next(p for p in LOGS if p.endswith("/pw24.log.gz"))
    rel = os.path.relpath(pw24)
    for spelling in (os.path.join(".", rel), os.path.abspath(pw24)):
        code, out, err = run(capsys, *[os.path.relpath(p) for p in LOGS], "--base", spelling)
        assert code == 0, err
        assert "predicted from " in out and "pw24.log.gz against measured" in out


def test_a_base_set_apart_says_why(capsys) -> None:  # noqa: ANN001
    gw3 = next(p for p in LOGS if p.endswith("/gw3.log.gz"))
    code, _, err = run(capsys, *LOGS, "--base", gw3)
    assert code == 2
    assert "gw3.log.gz is not one of the swept runs: differs in gw 3" in err


def test_too_many_logs_are_refused_before_any_is_read(capsys, tmp_path) -> None:  # noqa: ANN001
    from viewer.whatif.sweep import MAX_RUNS

    paths = [str(tmp_path / f"r{i}.log") for i in range(MAX_RUNS + 1)]  # none is there
    code, _, err = run(capsys, *paths)
    assert code == 2
    assert f"{MAX_RUNS + 1} logs: a sweep takes at most {MAX_RUNS}" in err


def test_a_chart_is_written_where_the_display_named_is_gone(tmp_path) -> None:  # noqa: ANN001
    """DISPLAY names an X server that is not there (a stale ssh session): the chart is an
    image, written without one, not a Qt abort."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env["DISPLAY"] = ":97"
    out = tmp_path / "sweep.png"
    done = subprocess.run(
        [sys.executable, "-m", "viewer", "sweep", *LOGS, "--out", str(out)],
        env=env,
        capture_output=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-500:]
    assert out.read_bytes().startswith(b"\x89PNG")


def test_an_empty_out_name_is_refused(capsys) -> None:  # noqa: ANN001
    code, out, err = run(capsys, *LOGS, "--out", "")
    assert code == 2 and "--out : give a .png" in err and out == ""


def test_a_log_without_a_gpu_call_is_named(capsys, tmp_path) -> None:  # noqa: ANN001
    """Its row would be dashes, and its unknown kernel set the other runs apart."""
    import gzip

    text = gzip.decompress(Path(LOGS[0]).read_bytes())
    lines = [x for x in text.splitlines(keepends=True) if b",GPU_" not in x]
    bare = tmp_path / "nogpu.log"
    bare.write_bytes(b"".join(lines))
    for argv in ([str(bare), "--values", "4,8"], [str(bare), *LOGS[1:]]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == ""
        assert "nogpu.log: no GPU call" in err and "Traceback" not in err


def test_a_run_whose_setting_cannot_be_replayed_is_named(capsys, tmp_path) -> None:  # noqa: ANN001
    """A head stating 2000 synthesis workers (past the what-if's 1024): the message names
    the log and its value, as the sweep's; it said only "--pw must be ...", an option the
    sweep has not."""
    samples = Path(__file__).resolve().parents[2] / "sample_logs"
    text = (samples / "phase8_pw20.log").read_text()
    stated = "count\x1b[0m\x1b[2m=\x1b[0m20\n"
    assert stated in text
    big = tmp_path / "big_pw.log"
    big.write_text(text.replace(stated, "count\x1b[0m\x1b[2m=\x1b[0m2000\n", 1))
    code, out, err = run(capsys, str(big), str(samples / "phase8_pw10_5sectors.log"))
    assert code == 2 and out == ""
    assert "big_pw.log: pw 2000 cannot be replayed (" in err and "Traceback" not in err
