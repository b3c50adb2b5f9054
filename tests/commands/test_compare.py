"""`python -m viewer compare`: JSON schema, Markdown headline and table, text, options, errors."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from viewer.analysis.compare import FIGURE_KEYS
from viewer.commands import compare

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
PHASE7 = SAMPLES / "phase7_pw20.log"
PHASE8 = SAMPLES / "phase8_pw20.log"
DAMAGED = SAMPLES / "damaged.log"
REPORT_SESSION_KEYS = {"index", "gpus", "jobs", "transitions", "kernel", "throughput", "verdict"}


def run_compare(*argv: str) -> int:
    """The command as the CLI runs it (``viewer/cli.py`` registers it under ``compare``)."""
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    compare.add_parser(sub, "compare")
    return compare.run(parser.parse_args(["compare", *argv]))


def test_json_has_the_schema_both_session_objects_and_every_diff(capsys) -> None:
    assert run_compare(str(PHASE7), str(PHASE8), "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["schema"] == "cuzk-timeline-compare/1"
    assert {"schema", "a", "b", "diff"} <= set(out)
    assert set(out["a"]) >= REPORT_SESSION_KEYS and set(out["b"]) >= REPORT_SESSION_KEYS
    assert list(out["diff"]) == list(FIGURE_KEYS)
    m = out["diff"]["measured_s_per_proof"]
    assert m["a"] == pytest.approx(51.0, abs=0.05) and m["b"] == pytest.approx(43.7, abs=0.05)
    assert m["delta"] == pytest.approx(m["b"] - m["a"], abs=1e-5)
    assert m["relative"] == pytest.approx((m["b"] - m["a"]) / m["a"], abs=1e-5)
    assert m["better"] == "lower" and m["judgement"] == "better"
    assert out["diff"]["efficiency"]["better"] == "higher"
    assert out["a"]["throughput"]["measured_s_per_proof"] == pytest.approx(m["a"], abs=1e-3)
    assert out["labels"] == {"a": "phase7_pw20", "b": "phase8_pw20"}
    assert out["alignment"]["mode"] == "first-gpu"
    assert "range" not in out


def test_json_null_where_undefined(capsys) -> None:
    # Two sessions of one log (the first crashed): a figure missing on either side, or a zero
    # baseline, gives a null change rather than a number.
    assert (
        run_compare(str(DAMAGED), str(DAMAGED), "--session-a", "1", "--session-b", "2", "--json")
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    for figure, d in out["diff"].items():
        if d["a"] is None or d["b"] is None:
            assert d["delta"] is None and d["relative"] is None, figure
        elif d["a"] == 0:
            assert d["relative"] is None, figure
    assert out["a"]["index"] == 0 and out["b"]["index"] == 1
    assert out["labels"] == {"a": "damaged session 1", "b": "damaged session 2"}


def test_markdown_headline_and_table(capsys) -> None:
    argv = [str(PHASE7), str(PHASE8), "--markdown", "--label-a", "Phase 7", "--label-b", "Phase 8"]
    assert run_compare(*argv) == 0
    text = capsys.readouterr().out
    assert text.startswith("# Phase 7 vs Phase 8: 51.0 -> 43.7 s/proof, 14.3 % faster\n")
    assert "| figure | Phase 7 | Phase 8 | delta | relative |" in text
    assert "| measured s/proof | 51.0 | 43.7 | -7.3 | -14.3 % |" in text
    assert "| GPU efficiency (merged intervals) | 98.9 % | 88.9 % | -9.9 pp | -10.0 % |" in text
    assert "| kernel mean per partition (ms) | 3740 | 3740 | +0 | +0.0 % |" in text
    assert "binding floor: GPU worker (Phase 7) -> synthesis (Phase 8)" in text
    assert "| synthesis floor (s/proof) | 47.0 | 47.0 | +0.0 | +0.0 % |" in text
    assert "**Phase 7 (worker-bound):**" in text and "**Phase 8 (synthesis-bound):**" in text


def test_range_and_alignment_options(capsys) -> None:
    argv = [str(PHASE7), str(PHASE8), "--json", "--align", "completion:2", "--range", "0:100000"]
    assert run_compare(*argv) == 0
    out = json.loads(capsys.readouterr().out)
    al = out["alignment"]
    assert al["mode"] == "completion:2"
    rng = out["range"]
    assert rng["aligned_ms"] == [0.0, 100000.0]
    assert rng["a_ms"] == [al["a_offset_ms"], al["a_offset_ms"] + 100000]
    assert rng["b_ms"] == [al["b_offset_ms"], al["b_offset_ms"] + 100000]
    assert rng["a"]["range_ms"] == rng["a_ms"] and rng["b"]["range_ms"] == rng["b_ms"]
    assert list(rng["diff"]) == list(FIGURE_KEYS)
    # The whole-run diff does not depend on the range.
    assert out["diff"]["measured_s_per_proof"]["a"] == pytest.approx(51.0, abs=0.05)


def test_text_output_names_both_runs_and_verdicts(capsys) -> None:
    assert run_compare(str(PHASE7), str(PHASE8), "--range", "0:200000") == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == "phase7_pw20 vs phase8_pw20: 51.0 -> 43.7 s/proof, 14.3 % faster"
    assert "Whole runs" in text and "Aligned range 0.0 s -> 200.0 s after first GPU_START" in text
    assert "phase8_pw20 (synthesis-bound)" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([str(PHASE7), str(PHASE8), "--session-b", "3"], "no session 3"),
        ([str(PHASE7), str(PHASE8), "--align", "completion:99"], "cannot align on completion"),
        ([str(PHASE7), str(SAMPLES / "missing.log")], "missing.log"),
    ],
)
def test_errors_exit_2_with_a_message(capsys, argv, message) -> None:
    assert run_compare(*argv) == 2
    assert message in capsys.readouterr().err


def test_bad_alignment_is_an_argument_error(capsys) -> None:
    with pytest.raises(SystemExit):
        run_compare(str(PHASE7), str(PHASE8), "--align", "middle")
    assert "unknown alignment" in capsys.readouterr().err


def test_json_states_each_figure_once_at_one_precision(capsys) -> None:
    """A figure in the diff and the same figure in a run's summary are the same number: one
    rounding rule (ms to 3 decimals, s and fractions to 6), not 4 digits here and 6 there."""
    assert run_compare(str(PHASE7), str(PHASE8), "--json", "--range", "0:200000") == 0
    out = json.loads(capsys.readouterr().out)
    for doc in (out, out["range"]):
        diff = doc["diff"]
        for side in ("a", "b"):
            s = doc[side]
            twins = {
                "measured_s_per_proof": s["throughput"]["measured_s_per_proof"],
                "theoretical_s_per_proof": s["throughput"]["theoretical_s_per_proof"],
                "ratio": s["throughput"]["ratio"],
                "worker_floor_s": s["floors"]["worker_s"],
                "synthesis_floor_s": s["floors"]["synthesis_s"],
                "arrival_floor_s": s["floors"]["arrival_s"],
                "kernel_mean_ms": s["kernel"]["mean_ms"],
            }
            for key, value in twins.items():
                assert diff[key][side] == value, (key, side)
        # the delta is the difference of the numbers shown, to the shown precision
        m = diff["measured_s_per_proof"]
        assert m["delta"] == round(m["b"] - m["a"], 6)
        # s/proof keeps its microseconds: more than the 4 decimals it used to be cut to
        assert m["a"] != round(m["a"], 4) or m["b"] != round(m["b"], 4)


def test_markdown_writes_labels_and_file_names_as_text(capsys, tmp_path: Path) -> None:
    """A file named like HTML and a label with a table pipe stay literal text (item 16)."""
    hostile = tmp_path / "<img src=x onerror=alert(1)>.log"
    hostile.write_bytes(PHASE7.read_bytes())
    assert run_compare(str(hostile), str(PHASE8), "--markdown", "--label-b", "b|*x*") == 0
    md = capsys.readouterr().out
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt;" in md
    header = next(line for line in md.splitlines() if line.startswith("| figure |"))
    assert header.count(" | ") == 4  # figure, A, B, delta, relative: the pipe did not split
    assert "b\\|\\*x\\*" in header


@pytest.mark.parametrize(("short", "argv"), [("b", ["completion:6"]), ("a", ["completion:6"])])
def test_a_log_short_of_the_completion_is_named_with_its_count(short: str, argv, capsys) -> None:
    """`--align completion:6` with one log of 4 completed jobs: the message names that log
    (not the other) and says how many it has (issue 27, item 18)."""
    few = SAMPLES / "phase7_gw1.log"  # 4 jobs completed
    a, b = (PHASE7, few) if short == "b" else (few, PHASE7)
    assert run_compare(str(a), str(b), "--align", *argv) == 2
    err = capsys.readouterr().err
    assert str(few) in err and str(PHASE7) not in err, err
    assert "completed 4 jobs" in err and "completion #6" in err, err


def test_json_is_the_comparison_made_at_once_written_compact(capsys, monkeypatch) -> None:
    """``compare --json`` writes its sessions' tables a chunk of rows at a time (2 rows
    here), compact as the report's: the document is ``compare_dict`` made at once (two
    logs of 150 000 jobs, indented and whole, were 166 MB of text and 1.7 GB)."""
    from viewer.export import format as format_module
    from viewer.export.compare import compare_dict, compare_runs
    from viewer.io import open_log

    monkeypatch.setattr(format_module, "ROWS_CHUNK", 2)
    assert run_compare(str(PHASE7), str(PHASE8), "--json") == 0
    text = capsys.readouterr().out
    assert "\n" not in text.rstrip("\n") and text.endswith("\n")
    a, b = (open_log(p).sessions[0] for p in (PHASE7, PHASE8))
    res = compare_runs(a, b, label_a="phase7_pw20", label_b="phase8_pw20",
                       source_a=str(PHASE7), source_b=str(PHASE8))  # fmt: skip
    out = json.loads(text)
    assert out == json.loads(json.dumps(compare_dict(res)))
    assert len(out["a"]["jobs"]) == len(a.jobs) > 2
