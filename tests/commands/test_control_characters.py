"""File names and labels with control characters reach the terminal escaped: they cannot
move the cursor, retitle the terminal or forge a line of the output (issue 27 item 17)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from viewer.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
EVIL = "evil\x1b]0;pwned\x07\nfake line\x9b2J.log"


@pytest.fixture
def evil_log(tmp_path: Path) -> Path:
    path = tmp_path / EVIL
    shutil.copy(SAMPLES / "phase8_pw10_5sectors.log", path)
    return path


def _no_controls(text: str) -> None:
    assert not any(ord(c) < 0x20 and c != "\n" or 0x7F <= ord(c) < 0xA0 for c in text), text
    assert not any(line.startswith("fake line") for line in text.splitlines())


@pytest.mark.parametrize(
    "argv",
    [
        ["report"],
        ["report", "--markdown"],
        ["info"],
        ["whatif", "--gw", "1"],
        ["report", "--table"],
    ],
)
def test_a_hostile_file_name_is_printed_escaped(capsys, evil_log, argv) -> None:
    command, *options = argv
    main([command, str(evil_log), *options])
    out = capsys.readouterr()
    for text in (out.out, out.err):
        _no_controls(text)
    if "--markdown" not in options:  # Markdown escapes its own specials on top
        assert "evil\\x1b]0;pwned\\x07\\nfake line\\x9b2J.log" in out.out


def test_a_hostile_label_is_printed_escaped(capsys) -> None:
    main(["compare", str(SAMPLES / "phase7_gw1.log"), str(SAMPLES / "phase8_pw20.log"),
          "--label-a", "A\x1b[2J\nforged: 1.0 s/proof"])  # fmt: skip
    out = capsys.readouterr().out
    _no_controls(out)
    assert "A\\x1b[2J\\nforged" in out
    assert not any(line.startswith("forged") for line in out.splitlines())
