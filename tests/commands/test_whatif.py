"""`python -m viewer whatif`: the table, the JSON, the predicted log, and every bad knob."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viewer.cli import main
from viewer.io import open_log

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
SAMPLE = SAMPLES / "phase8_pw10_5sectors.log"
PHASE9 = ["--kernel-ms", "1824", "--prep-ms", "1909", "--post-ms", "504"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["whatif", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_has_the_documented_shape(capsys) -> None:
    code, out, _ = run(capsys, str(SAMPLE), *PHASE9, "--gw", "1", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["format"] == "cuzk-timeline-whatif/1"
    assert d["log"] == str(SAMPLE) and (d["session"], d["index"]) == (1, 0)
    assert d["knobs"] == {"gw": 1, "kernel_ms": 1824.0, "prep_ms": 1909.0, "post_ms": 504.0}
    assert d["measured"]["s_per_proof"] == pytest.approx(37.4)
    for run_ in ("baseline", "scenario"):
        r = d[run_]
        assert set(r["floors"]) == {"kernel_s", "worker_s", "synthesis_s", "arrival_s"}
        assert {"s_per_proof", "gpu_efficiency", "bound", "runner_up"} <= set(r)
    assert d["baseline"]["s_per_proof"] == pytest.approx(37.4, rel=0.03)
    assert d["scenario"]["s_per_proof"] == pytest.approx(42.9, rel=0.05)
    assert (d["baseline"]["bound"], d["scenario"]["bound"]) == ("kernel", "worker")
    assert d["scenario"]["floors"]["kernel_s"] == pytest.approx(18.24, rel=0.01)
    # 3 of its 5 jobs waited for a synthesis slot: the scenario's other end is there too.
    late = d["late_arrivals"]
    assert late["hidden_arrivals"] == 3 and late["s_per_proof"] >= d["scenario"]["s_per_proof"]
    code, out, _ = run(capsys, str(SAMPLE), "--json")  # no knob: no scenario of its own
    assert json.loads(out)["late_arrivals"] is None


def test_text_table_and_sentence(capsys) -> None:
    code, out, _ = run(capsys, str(SAMPLE), *PHASE9)
    assert code == 0
    assert "figure" in out and "measured" in out and "replayed" in out and "predicted" in out
    assert "synthesis floor (s/proof)" in out
    assert "the synthesis floor (36.5 s) binds" in out
    code, md, _ = run(capsys, str(SAMPLE), "--gw", "1", "--markdown")
    assert code == 0 and "| figure | measured | replayed | predicted |" in md


def test_out_writes_the_predicted_run_as_a_log_the_viewer_reads(capsys, tmp_path: Path) -> None:
    out = tmp_path / "pred.log"
    code, text, _ = run(capsys, str(SAMPLE), "--gw", "1", "--kernel-ms", "1824", "--out", str(out))
    assert code == 0
    code, js, _ = run(capsys, str(SAMPLE), "--gw", "1", "--kernel-ms", "1824", "--json")
    predicted = json.loads(js)["scenario"]["s_per_proof"]
    from viewer.analysis import summarize

    (session,) = open_log(out).sessions
    sm = summarize(session)
    assert sm.throughput.measured_s_per_proof == pytest.approx(predicted, abs=0.01)
    assert sm.floors.bound == "worker" and sm.kernel.source == "cuzk_timing"
    assert main(["compare", str(SAMPLE), str(out)]) == 0
    assert "s/proof" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--gw", "0"], "--gw must be a whole number from 1 to 64, not 0"),
        (["--pw", "-3"], "--pw must be a whole number from 1 to 1024"),
        (["--gpus", "100000"], "--gpus must be a whole number from 1 to 64"),
        (["--queue-cap", "0"], "--queue-cap must be a whole number"),
        (["--kernel-ms", "nan"], "--kernel-ms must be a finite number"),
        (["--kernel-ms", "0"], "--kernel-ms must be a finite number more than 0"),
        (["--prep-ms", "-5"], "--prep-ms must be a finite number"),
        (["--post-scale", "inf"], "--post-scale must be a finite number"),
        (["--synth-scale", "1e300"], "--synth-scale must be a finite number"),
        (["--synth-ms", "1e300"], "--synth-ms must be a finite number"),
        (["--kernel-scale", "0"], "--kernel-scale must be a finite number at least 0.01"),
    ],
)
def test_bad_knobs_are_clear_errors(capsys, argv: list[str], message: str) -> None:
    code, out, err = run(capsys, str(SAMPLE), *argv)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_both_mean_and_scale_of_one_stage_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["whatif", str(SAMPLE), "--kernel-ms", "1", "--kernel-scale", "2"])
    assert exc.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def test_out_never_writes_over_the_input(capsys, tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_bytes(SAMPLE.read_bytes())
    link = tmp_path / "link.log"
    link.symlink_to(log)
    before = log.read_bytes()
    for target in (log, link):
        code, _, err = run(capsys, str(log), "--gw", "1", "--out", str(target))
        assert code == 2 and "refusing to write over the input" in err
    assert log.read_bytes() == before


def test_missing_session_and_nothing_to_replay(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, str(SAMPLE), "--session", "4")
    assert code == 2 and "no session 4 in" in err and "numbered 1)" in err
    crashed = SAMPLES / "damaged.log"
    code, out, _ = run(capsys, str(crashed), "--session", "1", "--gw", "1")
    assert code == 0
    assert "No prediction of s/proof" in out
    assert "two are needed to measure s/proof" in out


def test_a_run_whose_jobs_all_finished_at_once_has_no_replay_error(capsys) -> None:
    """Two jobs done in the same millisecond: no interval between finished proofs was seen,
    so the measured s/proof is unknown (null, once 0.0), and so are the replay's error
    against it and a change against it; no traceback."""
    log = Path(__file__).resolve().parents[1] / "io" / "data"
    code, out, err = run(capsys, str(log / "two_gpus_block_without_its_gpu_start.log"), "--json")
    assert code == 0 and "Traceback" not in err
    d = json.loads(out)
    assert d["measured"]["s_per_proof"] is None and d["replay_error"] is None
    assert any("the 2 jobs in the log completed in the same millisecond" in n for n in d["notes"])


def test_json_gives_the_other_ends_of_what_the_log_cannot_show(capsys, tmp_path: Path) -> None:
    """``late_arrivals`` and ``bounded_queue``: the scenario replayed with the hidden
    arrivals at their latest, and with the queue bounded at the most the log shows."""
    from viewer.sim.model import SimConfig, simulate
    from viewer.sim.writer import WriteOptions, write

    log = tmp_path / "run.log"
    cfg = SimConfig(sectors=8, pw=14, gw=2, seed=664, jitter=0.1, synth_ms=50_000.0,
                    kernel_ms=1873.0, warmup_ms=2000.0, queue_cap=12)  # fmt: skip
    write(simulate(cfg), log, WriteOptions())
    code, out, _ = run(capsys, str(log), "--pw", "40", "--json")
    d = json.loads(out)
    assert code == 0 and d["bounded_queue"]["queue_cap"] == 4
    assert d["bounded_queue"]["s_per_proof"] < d["scenario"]["s_per_proof"]
    assert d["late_arrivals"]["hidden_arrivals"] == 6
    assert any("queues up to" in n for n in d["notes"])


@pytest.mark.parametrize("out", ["", "-"])
def test_whatif_out_empty_or_dash_is_refused(capsys, tmp_path, monkeypatch, out) -> None:  # noqa: ANN001
    monkeypatch.chdir(tmp_path)
    code = main(["whatif", str(SAMPLE), "--out", out])
    err = capsys.readouterr().err
    assert code == 2 and "give a file name" in err
    assert not (tmp_path / "-").exists()


def test_a_gain_that_wall_time_contradicts_is_not_claimed(capsys) -> None:  # noqa: ANN001
    """issue 27 item 6: a short run's completions can bunch closer while the run as a whole
    finishes later; the sentence says so.  (`--gw 16` on two_gpus.log claimed 16.5 % faster
    while its own predicted run finished later: GPU 0's workers took the first calls, now
    the least busy GPU's do, and it finishes sooner: tests/whatif/test_gpus_spread.py.)"""
    log = str(SAMPLES / "damaged.log")
    code = main(["whatif", log, "--session", "2", "--pw", "8", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0
    s, b = d["scenario"], d["baseline"]
    assert s["s_per_proof"] < b["s_per_proof"] and s["wall_s_per_proof"] > b["wall_s_per_proof"]
    assert "but wall time / proofs goes from 55.7 to 59.6 s" in d["sentence"]
    assert "below it is a short run's" in d["sentence"]
    code = main(["whatif", str(SAMPLES / "two_gpus.log"), "--gw", "16", "--json"])
    d = json.loads(capsys.readouterr().out)
    s, b = d["scenario"], d["baseline"]
    assert s["s_per_proof"] < b["s_per_proof"] and s["wall_s_per_proof"] < b["wall_s_per_proof"]
    assert "wall time" not in d["sentence"]


@pytest.mark.parametrize(
    ("log", "knobs"),
    [
        ("phase8_pw10_5sectors.log", ["--pw", "20"]),
        ("phase8_pw10_5sectors.log", ["--gw", "1", "--kernel-scale", "0.5"]),
        ("two_gpus.log", ["--gw", "16"]),
        ("no_timing", ["--gw", "1"]),
    ],
)
def test_report_on_the_out_log_gives_the_scenarios_figures(capsys, tmp_path, log, knobs) -> None:  # noqa: ANN001
    """issue 27 item 6: the prediction, its floors and its --out log are one thing (the
    floors of a log without CUZK_TIMING were 147.2 against 75.1; --pw 20 divided by the knob
    where the report counts the slots held)."""
    path = SAMPLES / log
    if log == "no_timing":
        text = (SAMPLES / "phase8_pw10_5sectors.log").read_text().splitlines(keepends=True)
        path = tmp_path / "no_timing.log"
        path.write_text("".join(line for line in text if "CUZK_TIMING" not in line))
    out = tmp_path / "pred.log"
    assert main(["whatif", str(path), *knobs, "--json", "--out", str(out)]) == 0
    scenario = json.loads(capsys.readouterr().out)["scenario"]
    assert main(["report", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["sessions"][0]
    assert report["throughput"]["measured_s_per_proof"] == pytest.approx(
        scenario["s_per_proof"], rel=0.01
    )
    for name, value in scenario["floors"].items():
        assert report["floors"][name] == pytest.approx(value, rel=0.01, abs=0.05), name
    assert report["floors"]["bound"] == scenario["bound"]
