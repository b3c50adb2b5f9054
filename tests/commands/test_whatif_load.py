"""`whatif --calibrate` and the closed loop: the load model, the band, wall time / proofs,
and every way the other logs can be wrong."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from viewer.cli import main
from viewer.sim.contention import Contention
from viewer.sim.model import SimConfig, simulate
from viewer.sim.writer import WriteOptions, write

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"
MACHINE = SimConfig(sectors=8, pw=10, seed=5, contention=Contention(synth=0.04, cpu=0.03, cores=12))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["whatif", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def machine_logs() -> dict[str, Path]:
    """Runs of one simulated machine at pw 4, 10, 20, and of another (twice the synthesis
    work) at pw 10."""
    d = Path(tempfile.mkdtemp(prefix="calibrate-"))
    out = {}
    for name, cfg in {
        "pw4": replace(MACHINE, pw=4),
        "pw10": MACHINE,
        "pw20": replace(MACHINE, pw=20),
        "other": replace(MACHINE, synth_ms=2 * MACHINE.synth_ms, pw=12),
    }.items():
        write(simulate(cfg), d / f"{name}.log", WriteOptions())
        out[name] = d / f"{name}.log"
    return out


def test_json_gives_the_band_the_load_and_both_throughput_figures(capsys, machine_logs) -> None:
    logs = machine_logs
    code, out, err = run(
        capsys, str(logs["pw10"]), "--pw", "16", "--calibrate", str(logs["pw4"]),
        str(logs["pw20"]), "--json",
    )  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    s = d["scenario"]
    lo, hi = s["band"]
    assert lo <= s["s_per_proof"] <= hi
    load = s["load"]
    assert load["logs"] == [str(logs[n]) for n in ("pw10", "pw4", "pw20")]
    assert load["cores"] == 12 and load["slopes"]["synth"] == pytest.approx(0.04, abs=0.008)
    assert load["range"]["synth"][1] > 16  # pw 20 ran more at once than pw 16 will
    assert load["beyond"] == []
    for key in ("measured", "baseline", "scenario"):
        assert d[key]["wall_s_per_proof"] > d[key]["s_per_proof"]  # the cold start


def test_one_log_past_its_load_answers_with_a_band(capsys) -> None:
    code, out, _ = run(capsys, str(SAMPLE), "--pw", "30")
    assert code == 0
    assert "past the loads the logs show" in out and "it may gain or lose" in out
    assert "a run at this setting, given with --calibrate, would settle it" in out
    assert "load: " in out


def test_a_closed_loop_prints_both_figures(capsys) -> None:
    code, out, _ = run(capsys, str(SAMPLE), "--jobs", "20", "--concurrency", "15", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["knobs"] == {"jobs": 20, "concurrency": 15}
    s = d["scenario"]
    assert s["wall_s_per_proof"] > s["s_per_proof"] > 0
    code, text, _ = run(capsys, str(SAMPLE), "--jobs", "20", "--concurrency", "15")
    assert "wall time / proofs (s)" in text and "jobs 20, concurrency 15" in text


def test_a_log_of_another_machine_is_named(capsys, machine_logs) -> None:
    logs = machine_logs
    code, out, _ = run(capsys, str(logs["pw10"]), "--pw", "16", "--calibrate",
                       str(logs["pw4"]), str(logs["other"]))  # fmt: skip
    assert code == 0
    assert f"{logs['other']}: synth +" in out and "another machine" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--calibrate", "/nonexistent/x.log"], "/nonexistent/x.log"),
        (["--calibrate", str(SAMPLE)], "given twice"),
        (["--jobs", "0"], "--jobs must be a whole number from 1"),
        (["--concurrency", "-3"], "--concurrency must be a whole number from 1"),
        (["--jobs", "100001"], "--jobs must be a whole number from 1 to 100000"),
    ],
)
def test_bad_calibration_and_loop_are_clear_errors(capsys, argv, message) -> None:
    code, out, err = run(capsys, str(SAMPLE), *argv)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_a_calibration_file_that_is_no_log_is_named(capsys, tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("nothing here\n")
    code, _, err = run(capsys, str(SAMPLE), "--pw", "12", "--calibrate", str(junk))
    assert code == 2 and "notes.txt" in err and "Traceback" not in err


def test_a_calibration_log_cut_short_is_said(capsys, machine_logs, tmp_path: Path) -> None:
    import gzip

    whole = gzip.compress(machine_logs["pw4"].read_bytes())
    cut = tmp_path / "pw4.log.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    code, out, _ = run(capsys, str(machine_logs["pw10"]), "--pw", "16", "--calibrate", str(cut))
    assert code == 0
    assert f"note: {cut}: the compressed stream ends early" in out


def test_out_never_writes_the_logs_notes(capsys, tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_bytes(SAMPLE.read_bytes())
    notes = tmp_path / "run.log.annotations.json"
    code, out, err = run(capsys, str(log), "--gw", "1", "--out", str(notes))
    assert code == 2 and not notes.exists()
    assert "holds the annotations of the input" in err and err.count("refusing") == 1
