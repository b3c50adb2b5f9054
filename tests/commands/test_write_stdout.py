"""JSON goes to stdout as UTF-8 bytes (``write_stdout``), in order with the text before it,
and the commands' JSON is the same document as before, one line each."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from viewer.commands.common import write_stdout
from viewer.export.format import json_bytes, to_json

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs" / "two_gpus.log"


def test_bytes_follow_the_text_written_before_them(monkeypatch) -> None:
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", out)
    sys.stdout.write("before ")  # still in the text layer's buffer
    write_stdout(json_bytes({"a": "\u2009x"}))
    sys.stdout.write("after")
    sys.stdout.flush()
    assert raw.getvalue().decode("utf-8") == 'before {"a":"\u2009x"}\nafter'


def test_a_text_only_stream_gets_the_text(monkeypatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    write_stdout(json_bytes([1, float("nan")]))
    assert out.getvalue() == "[1,null]\n"


def test_json_bytes_and_to_json_are_one_document() -> None:
    doc = {"label": "3\u2009746 ms", "n": [1, 2.5, None]}
    assert json_bytes(doc) == to_json(doc).encode("utf-8") + b"\n"
    assert json_bytes(doc, newline=False) == to_json(doc).encode("utf-8")


@pytest.mark.parametrize(
    "args",
    [
        ["report", "--json"],
        ["export", "-o", "-", "--format", "trace"],
        ["whatif", "--json", "--gpus", "3"],
    ],
)
def test_the_commands_print_one_utf8_json_document(args) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "viewer", *args[:1], str(SAMPLE), *args[1:]],
        cwd=ROOT, capture_output=True, check=True, env={"PYTHONIOENCODING": "ascii",
                                                        **_env()},
    )  # fmt: skip
    assert done.stdout.endswith(b"\n") and done.stdout.count(b"\n") == 1
    json.loads(done.stdout.decode("utf-8"))  # UTF-8 whatever the terminal's encoding


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONIOENCODING"}


@pytest.mark.parametrize(
    "args",
    [["report"], ["report", "--markdown"], ["export", "-o", "-", "--format", "markdown"]],
)
def test_a_terminal_that_cannot_encode_a_thin_space_gets_a_question_mark(args) -> None:
    """Under an ASCII stdout the text report ended in a UnicodeEncodeError traceback."""
    done = subprocess.run(
        [sys.executable, "-m", "viewer", *args[:1], str(SAMPLE), *args[1:]],
        cwd=ROOT, capture_output=True, env={**_env(), "PYTHONIOENCODING": "ascii"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    assert b"ms" in done.stdout and b"?" in done.stdout
    done.stdout.decode("ascii")


@pytest.mark.skipif(sys.platform == "win32", reason="closes a POSIX file descriptor")
@pytest.mark.parametrize(
    ("args", "fd", "code"),
    [
        (["report", str(SAMPLE), "--json"], 1, 0),
        (["report", str(SAMPLE)], 1, 0),
        (["export", str(SAMPLE), "-o", "-", "--format", "trace"], 1, 0),
        (["whatif", str(SAMPLE), "--json"], 1, 0),
        (["report", str(ROOT / "no such.log")], 2, 2),
    ],
)
def test_a_closed_stdout_or_stderr_gives_no_traceback(args, fd, code) -> None:
    """`report LOG >&-`: Python starts with sys.stdout None, and writing to it was an
    AttributeError traceback; the output goes nowhere, as print's does."""
    import os

    done = subprocess.run(
        [sys.executable, "-m", "viewer", *args],
        cwd=ROOT, stdout=subprocess.DEVNULL if fd == 2 else None,
        stderr=subprocess.PIPE if fd == 1 else None, preexec_fn=lambda: os.close(fd),
    )  # fmt: skip
    assert done.returncode == code
    if fd == 1:
        assert b"Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["report", "info", "sweep"])
def test_a_full_disk_on_stdout_is_one_line_not_a_traceback(command) -> None:  # noqa: ANN001
    """`report LOG > /dev/full`: every command printed a traceback (issue 27 item 18)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    root = Path(__file__).resolve().parents[2]
    logs = [str(root / "sample_logs" / "phase8_pw20.log")]
    if command == "sweep":
        logs = [str(p) for p in sorted((root / "tests/whatif/data/h200_second").glob("*.gz"))]
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "viewer", command, *logs],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=root,
            timeout=120,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"{command}: cannot write the output: No space left on device" in done.stderr
