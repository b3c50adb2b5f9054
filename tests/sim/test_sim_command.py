"""`python -m viewer simulate`: options reach the log."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tests.sim.logparse import parse
from viewer.cli import main
from viewer.io import open_log


def test_simulate_writes_the_asked_log(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "x.log"
    args = ["simulate", "-o", str(out), "--sectors", "2", "--gw", "1", "--gpus", "2"]
    assert main([*args, "--journald", "--crlf", "--noise", "0.5", "--era", "old"]) == 0
    data = out.read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n")
    assert b"cuzk-daemon[4242]: TIMELINE," in data
    events = parse(data.decode()).events
    assert len(events) == 2 * 10 * 6
    assert {e[1] for e in events} >= {"CHAN_SEND"}
    assert {e[3]["worker"] for e in events if "worker" in e[3]} == {0, 1}
    assert "MB/s" in capsys.readouterr().err


def test_events_option_sizes_the_run(tmp_path: Path) -> None:
    out = tmp_path / "x.log.gz"
    assert main(["simulate", "-o", str(out), "--events", "300", "--no-tracing"]) == 0
    with gzip.open(out, "rt") as f:
        events = parse(f.read()).events
    assert len(events) == 300


def test_help_teaches_units(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = capsys.readouterr().out
    for flag in ("--synth-ms", "--kernel-ms", "--noise", "--gw", "--pw", "--journald"):
        assert flag in text
    assert "ms" in text and "fraction" in text


def test_unknown_kind_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "-o", str(tmp_path / "x"), "--kinds", "porep-c3=1"])
    assert "unknown kind" in capsys.readouterr().err


def _refused(argv: list[str], capsys: pytest.CaptureFixture) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


#: Every numeric option, with values it must refuse (issue 13, item 11).
BAD_VALUES = {
    "--sectors": ["0", "-1", "nan", "1e300", str(10**30)],
    "--partitions": ["0", "100000", "inf"],
    "--interval-ms": ["-1", "nan", "inf", "1e300"],
    "--pw": ["0", "100000"],
    "--gw": ["0", "65"],
    "--gpus": ["0", "257"],
    "--queue-cap": ["0", "-3", str(10**9)],
    "--seed": ["-1", "nan", str(2**64)],
    "--jitter": ["-0.1", "nan", "inf", "0.5"],
    "--synth-ms": ["-1", "nan", "inf", "1e300"],
    "--prep-ms": ["nan"],
    "--kernel-ms": ["inf", "-5"],
    "--b-g2-ms": ["1e300"],
    "--epilogue-ms": ["nan"],
    "--assemble-ms": ["-inf"],
    "--dispatch-ms": ["1e300"],
    "--warmup-ms": ["nan"],
    "--events": ["0", "-6", "1e300", str(10**12)],
    "--noise": ["0.999999", "1", "-0.1", "nan"],
    "--disorder-ms": ["-1", str(10**12), "5000", "1000"],  # >= 1000: a false restart
    "--concurrency": ["0", "-1", "1e300"],
    "--contention": ["synth=nan", "cores=0", "synth=1e300", "x=1"],
    "--kinds": ["porep-c2=nan", "porep-c2=inf", "porep-c2=-1", "porep-c2=1e300"],
}


@pytest.mark.parametrize(
    ("option", "value"), [(o, v) for o, values in BAD_VALUES.items() for v in values]
)
def test_every_numeric_option_is_bounded(
    tmp_path: Path, capsys: pytest.CaptureFixture, option: str, value: str
) -> None:
    out = tmp_path / "x.log"
    err = _refused(["simulate", "-o", str(out), option, value], capsys)
    assert f"argument {option}" in err and ("from" in err or "kind" in err), err
    assert not out.exists()


def test_the_run_size_is_bounded(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "x.log"
    argv = ["simulate", "-o", str(out), "--sectors", "100000", "--partitions", "1000"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "TIMELINE events" in err and "--sectors" in err and "10000000" in err.replace(",", "")
    assert not out.exists()


def test_help_states_the_bounds(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "0-0.95" in text and "1-100000" in text


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_the_output_is_a_regular_file_or_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture, kind: str
) -> None:
    from tests.hostile.files import drained_fifo

    out = tmp_path / "x.log"
    if kind == "directory":
        out.mkdir()
        assert main(["simulate", "-o", str(out), "--sectors", "1"]) == 2
    else:
        with drained_fifo(out) as received:
            assert main(["simulate", "-o", str(out), "--sectors", "1"]) == 2
        assert received == []
    assert "not a regular file" in capsys.readouterr().err


def test_gzip_output_is_deterministic(tmp_path: Path) -> None:
    a, b = tmp_path / "a.log.gz", tmp_path / "b.log.gz"
    assert main(["simulate", "-o", str(a), "--sectors", "1"]) == 0
    assert main(["simulate", "-o", str(b), "--sectors", "1"]) == 0
    assert gzip.decompress(a.read_bytes()) == gzip.decompress(b.read_bytes())
    assert a.read_bytes()[4:8] == b"\0\0\0\0"  # no time stamp in the gzip header


def test_the_most_disorder_still_reads_as_one_daemon_run(tmp_path: Path) -> None:
    """Lines trailing their events by up to 999 ms stay one session; 5000 once split a log
    into 16 false restarts (issue 27 item 8), and is now refused."""
    out = tmp_path / "d.log"
    assert main(["simulate", "-o", str(out), "--sectors", "30", "--gpus", "2",
                 "--disorder-ms", "999"]) == 0  # fmt: skip
    assert len(open_log(out).sessions) == 1
