"""The command line keeps numpy's OpenBLAS to one thread (issue 15): its pool of a thread
per core spins ~0.1 s of CPU each at import, for linear algebra the viewer never does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, os, sys
if sys.argv[1] == "viewer":
    import viewer.cli  # noqa: F401 - what `python -m viewer` imports before any command
import numpy  # noqa: F401
tasks = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None
print(json.dumps({"env": os.environ.get("OPENBLAS_NUM_THREADS"), "threads": tasks}))
"""


def _probe(first: str, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, first],
        cwd=ROOT, capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def _env_without_blas_setting() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}


def test_the_command_line_starts_no_blas_threads() -> None:
    got = _probe("viewer", _env_without_blas_setting())
    assert got["env"] == "1"
    if got["threads"] is not None:
        assert got["threads"] == 1  # the main thread alone


@pytest.mark.skipif(
    not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2,
    reason="counts threads through /proc, on a machine where OpenBLAS would start some",
)
def test_numpy_alone_would_start_them() -> None:
    """The probe can fail: without the setting, numpy's import starts OpenBLAS threads."""
    assert _probe("numpy", _env_without_blas_setting())["threads"] > 1


def test_a_value_the_user_set_is_kept() -> None:
    assert (
        _probe("viewer", {**_env_without_blas_setting(), "OPENBLAS_NUM_THREADS": "2"})["env"] == "2"
    )
