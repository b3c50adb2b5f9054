"""The committed sample logs are what the generator writes, and show what they claim."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from viewer.cli import main
from viewer.sim.damage import DamageReport, damaged_log
from viewer.sim.metrics import calls_of, figures
from viewer.sim.samples import SAMPLES, command, phase7_gw1, phase7_pw20, phase8_pw20, two_gpus
from viewer.sim.writer import render

SAMPLES_DIR = Path(__file__).parents[2] / "sample_logs"
EVENT = re.compile(
    r"^(?:[A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \S+ cuzk-daemon\[\d+\]: )?.*?"
    r"TIMELINE,(\d+),(SYNTH_START|SYNTH_END|GPU_QUEUE|CHAN_SEND|GPU_PICKUP|GPU_START|GPU_END),"
    r"([0-9a-f-]{36}),(\S+)$"
)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_committed_sample_matches_generator(name: str) -> None:
    made = SAMPLES[name]()
    data = made if isinstance(made, bytes) else render(*made).encode()
    committed = (SAMPLES_DIR / name).read_bytes()
    assert committed == data, f"sample_logs/{name} is stale: run `make samples`"
    assert len(committed) < 1_000_000


def test_readme_documents_every_sample() -> None:
    readme = (SAMPLES_DIR / "README.md").read_text()
    for name in SAMPLES:
        assert f"## {name}" in readme


def test_phase7_idle_gaps_between_calls_are_10_to_200_ms() -> None:
    c = calls_of(phase7_gw1()[0])
    order = np.argsort(c.start)
    gaps = c.start[order][1:] - c.end[order][:-1]
    assert gaps.min() >= 10 and gaps.max() <= 200


def test_two_gpus_are_both_busy() -> None:
    s = two_gpus()[0]
    assert s.config.gpus == 2 and s.config.gw == 2
    assert sorted(set(s.gpu.tolist())) == [0, 1]


def test_phase7_vs_phase8_at_pw20_is_roughly_published() -> None:
    p8 = figures(calls_of(phase8_pw20()[0])).measured_ms / 1000
    p7 = figures(calls_of(phase7_pw20()[0])).measured_ms / 1000
    assert p8 == pytest.approx(44.0, abs=1.5)
    assert p7 == pytest.approx(50.7, abs=1.5)


def _sessions(data: bytes) -> list[list[tuple[int, str, str, str]]]:
    """Strictly parsed TIMELINE events per daemon run."""
    sessions: list[list[tuple[int, str, str, str]]] = []
    for raw in data.split(b"\n"):
        line = raw.decode("utf-8", "replace").rstrip("\r")
        if "cuzk-daemon starting" in line:
            sessions.append([])
        m = EVENT.match(line)
        if m:
            sessions[-1].append((int(m[1]), m[2], m[3], m[4]))
    return sessions


def test_damaged_log_counts() -> None:
    r = DamageReport()
    data = damaged_log(r)
    sessions = _sessions(data)
    assert [len(s) for s in sessions] == r.events == [104, 119]
    starts = {(e[2], e[3].split(",")[1]) for e in sessions[0] if e[1] == "GPU_START"}
    ends = {(e[2], e[3].split(",")[1]) for e in sessions[0] if e[1] == "GPU_END"}
    assert len(starts - ends) == r.open_gpu == 2
    assert sessions[1][0][0] < 100, "the second run starts again near offset 0"
    assert data.count(b"\r\n") == r.crlf_lines
    assert not data.endswith(b"\n"), "the last line is cut"
    assert b"TIMELINE,69775,GPU_PIC\r\n" in data or b"TIMELINE,69775,GPU_PIC\n" in data


def test_readme_points_at_the_damage() -> None:
    r = DamageReport()
    damaged_log(r)
    readme = (SAMPLES_DIR / "README.md").read_text()
    section = readme.split("## damaged.log")[1].split("\n## ")[0]
    for what, line in r.where.items():
        assert f"line {line}" in section or f"lines {line}-" in section, what
    assert f"{r.where['last']} physical lines" in section
    assert f"| TIMELINE events accepted | {r.events[0]} | {r.events[1]} |" in section
    assert f"({r.crlf_lines} lines)" in section


@pytest.mark.parametrize("name", sorted(n for n in SAMPLES if n != "damaged.log"))
def test_readme_figures_are_current(name: str) -> None:
    made = SAMPLES[name]()
    assert not isinstance(made, bytes)
    f = figures(calls_of(made[0]))
    section = (SAMPLES_DIR / "README.md").read_text().split(f"## {name}")[1].split("\n## ")[0]
    assert f"{f.kernel_mean_ms:.1f} ms" in section
    assert f"{f.measured_ms / 1000:.1f} s/proof" in section


@pytest.mark.parametrize("name", sorted(set(SAMPLES) - {"damaged.log", "phase8_pw10_5sectors.log"}))
def test_documented_command_writes_the_sample(name: str, tmp_path: Path) -> None:
    made = SAMPLES[name]()
    documented = command(made, f"sample_logs/{name}").replace(
        "python -m viewer ", ".venv/bin/cuzk-timeline ", 1
    )  # the README gives the command `make` installs: it works outside an activated venv
    assert documented in (SAMPLES_DIR / "README.md").read_text()
    assert main(shlex.split(command(made, str(tmp_path / name)))[3:]) == 0
    assert (tmp_path / name).read_bytes() == (SAMPLES_DIR / name).read_bytes()
