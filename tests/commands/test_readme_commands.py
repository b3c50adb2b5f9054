"""The README's commands work as written: each `.venv/bin/cuzk-timeline` line of its code
blocks runs from a copy of the repository's root (the window's lines are parsed, not run),
its links lead somewhere, and its first screen gives `make run` and `make test`."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from viewer.cli import SUBCOMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TOOL = ".venv/bin/cuzk-timeline"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def code_lines(text: str) -> list[str]:
    """The lines of the README's shell code blocks (``sh`` or unlabelled) that run the tool."""
    return [
        line.strip()
        for lang, body in BLOCK.findall(text)
        if lang in ("", "sh", "bash")
        for line in body.splitlines()
        if TOOL in line and not line.lstrip().startswith("#")
    ]


def tool_argv(line: str) -> list[str]:
    """The arguments the line gives the tool (up to a pipe or a comment)."""
    words = shlex.split(line.split(TOOL, 1)[1], comments=True)
    return words[: words.index("|")] if "|" in words else words


def opens_window(argv: list[str]) -> bool:
    return not argv or argv[0] == "open" or argv[0] not in SUBCOMMANDS


LINES = code_lines(README.read_text())


def test_the_readme_has_commands_and_none_of_the_old_form() -> None:
    assert len(LINES) >= 15
    text = README.read_text()
    assert "python -m viewer" not in text, "it fails outside the venv: give .venv/bin/..."


def test_the_first_screen_gives_make_run_and_make_test() -> None:
    lang, first = BLOCK.findall(README.read_text())[0]
    commands = [line.split("#")[0].strip() for line in first.splitlines() if line.strip()]
    assert commands == ["make run", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run:", makefile, re.M) and re.search(r"^test:", makefile, re.M)


@pytest.mark.parametrize("line", [x for x in LINES if opens_window(tool_argv(x))])
def test_window_commands_parse(line: str) -> None:
    """Lines that open the window need a display: their options are parsed, as `main` does."""
    argv = ["open", *tool_argv(line)] if tool_argv(line)[:1] != ["open"] else tool_argv(line)
    args = build_parser(["open"]).parse_args(argv)
    for path in args.paths:
        assert (ROOT / path).exists(), f"{line}: {path} does not exist"


def test_headless_commands_run(tmp_path: Path) -> None:
    """Every headless line, run by bash in order (a line may read what one above wrote) in a
    folder laid out as the repository's root: `sample_logs/` and a `.venv/bin/cuzk-timeline`
    that runs this interpreter's `viewer`."""
    (tmp_path / "sample_logs").symlink_to(ROOT / "sample_logs")
    tool = tmp_path / TOOL
    tool.parent.mkdir(parents=True)
    tool.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m viewer "$@"\n')
    tool.chmod(0o755)
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    failed = []
    for line in LINES:
        argv = tool_argv(line)
        if opens_window(argv):
            continue
        assert argv[0] in SUBCOMMANDS, line
        r = subprocess.run(
            ["bash", "-o", "pipefail", "-c", line],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if r.returncode != 0 or "Traceback" in r.stderr:
            failed.append(f"{line}\n  exit {r.returncode}: {r.stderr.strip()[-400:]}")
    assert not failed, "README commands that fail:\n" + "\n".join(failed)


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("doc", ["README.md", "docs/PERFORMANCE.md", "sample_logs/README.md"])
def test_links_lead_somewhere(doc: str) -> None:
    path = ROOT / doc
    for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
        if re.match(r"\w+://", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        assert dest.exists(), f"{doc}: {target}"
        if anchor and dest.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", dest.read_text(), re.M)
            assert anchor in {_anchor(h) for h in headings}, f"{doc}: {target}"


def test_docs_quote_the_phase8_sample_as_report_prints_it() -> None:
    """One figure, one value: the verdict the README quotes for the Phase 8 sample, and the
    synthesis floor's lead every doc gives, are what `report` prints."""
    from viewer.analysis.summary import summarize
    from viewer.io import open_log

    log = open_log(ROOT / "sample_logs" / "phase8_pw10_5sectors.log")
    sentence = summarize(log.sessions[0]).verdict.sentence
    behind = re.search(r"\(([\d.]+) % behind\)", sentence)[1]
    for doc in (README, ROOT / "sample_logs" / "README.md"):
        quoted = re.findall(r"([\d.]+) % behind", doc.read_text())
        assert quoted and set(quoted) == {behind}, f"{doc.name}: {quoted}, report: {behind}"
    quote = re.search(r'\*"(GPU-bound: measured .*?)"\*', README.read_text(), re.S)[1]
    assert " ".join(quote.split()) in sentence
