"""Fixtures of the hostile-corpus harness: each driver or window probe runs once per
test session, in subprocesses (a hang is cut at the case's stated limit), several at a
time; the tests then read their results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.hostile.corpus import INPUTS, Built, Case, build
from tests.hostile.files import ROOT, cli_env, snapshot

HERE = Path(__file__).resolve().parent
PARALLEL = max(1, min(3, os.cpu_count() or 1))
#: Set to 1 to run the slowest cases too (a 200 MB line, 3000 daemon restarts).
ENV_SLOW = "CUZK_HOSTILE_SLOW"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"hostile_slow: a slow hostile case, run when ${ENV_SLOW}=1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(ENV_SLOW, "") not in ("", "0"):
        return
    skip = pytest.mark.skip(reason=f"slow hostile case: set {ENV_SLOW}=1 to run it")
    for item in items:
        if item.get_closest_marker("hostile_slow"):
            item.add_marker(skip)


@dataclass
class Run:
    """What one driver / probe subprocess did: a result per name (in order), whether it
    was cut at its time limit (and where), its stderr and exit status."""

    results: dict[str, dict] = field(default_factory=dict)
    hung_at: str | None = None
    stderr: str = ""
    returncode: int | None = None


def run_script(script: str, payload: list, timeout: float, key: str, **env: str) -> Run:
    """Run ``tests/hostile/<script>`` on ``payload`` (a JSON file), cut after ``timeout``
    seconds; results are keyed by each line's ``key`` field."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(payload, fh)
    proc = subprocess.Popen(
        [sys.executable, str(HERE / script), fh.name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=cli_env(**env),
        cwd=ROOT,
    )
    run = Run()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        run.hung_at = "?"
    finally:
        os.unlink(fh.name)
    run.returncode, run.stderr = proc.returncode, err.decode("utf-8", "backslashreplace")
    for line in out.decode("utf-8", "backslashreplace").splitlines():
        entry = json.loads(line)
        if entry.pop("started", False):
            if run.hung_at is not None:
                run.hung_at = entry[key]
            continue
        run.results[entry[key]] = entry
    return run


@dataclass
class InputRun:
    built: Built
    before: dict[str, str]
    after: dict[str, str]
    run: Run


def _selected(items: Iterable[pytest.Item], argname: str) -> set[str]:
    names = set()
    for item in items:
        if item.get_closest_marker("skip"):
            continue
        callspec = getattr(item, "callspec", None)
        if callspec is None or argname not in callspec.params:
            continue
        # Only this package's cases: other tests may name a parameter "case" too.
        value = callspec.params[argname]
        if isinstance(value, Case):
            names.add(value.name)
    return names


def _run_input(case: Case, root: Path) -> InputRun:
    built = build(case, root)
    before = snapshot(root / "in")
    payload = [{"name": c, "argv": built.argv(c)} for c in case.commands]
    run = run_script("drive.py", payload, case.limit_s, "name")
    return InputRun(built, before, snapshot(root / "in"), run)


@pytest.fixture(scope="session")
def input_runs(request: pytest.FixtureRequest, tmp_path_factory) -> dict[str, InputRun]:
    """Every command of ``COMMANDS`` on every selected input case (``INPUTS``)."""
    wanted = _selected(request.session.items, "case")
    cases = [c for c in INPUTS if c.name in wanted]
    roots = [tmp_path_factory.mktemp("hostile-input") for _ in cases]
    with ThreadPoolExecutor(PARALLEL) as pool:
        runs = list(pool.map(_run_input, cases, roots))
    return {c.name: r for c, r in zip(cases, runs, strict=True)}


@pytest.fixture(scope="session")
def window_runs(request: pytest.FixtureRequest, tmp_path_factory) -> tuple[Run, dict]:
    """Every selected window case opened, in one offscreen window, one after the other."""
    wanted = _selected(request.session.items, "window_case")
    cases = [c for c in INPUTS if c.name in wanted]
    built = {c.name: build(c, tmp_path_factory.mktemp("hostile-window")) for c in cases}
    before = {name: snapshot(b.root / "in") for name, b in built.items()}
    paths = [os.fspath(b.path) for b in built.values()]
    run = run_script("window_probe.py", paths, 30.0 + 15.0 * len(paths), "path")
    after = {name: snapshot(b.root / "in") for name, b in built.items()}
    return run, {name: (b, before[name], after[name]) for name, b in built.items()}
