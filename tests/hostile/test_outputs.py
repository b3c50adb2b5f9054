"""Hostile outputs for every export format, in one subprocess (60 s limit): the input
itself (by path, symlink or hard link), a FIFO, a directory, a symlink loop, a device,
a missing folder, a planted temp symlink, a non-UTF-8 name.  Nothing but the output may
change; a refusal names the file and the problem (issue 13, items 1 and 14)."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile.conftest import Run, run_script
from tests.hostile.files import SAMPLE, drained_fifo, snapshot
from viewer.export.format import display_path

FORMATS = {
    "trace": (".json", []),
    "markdown": (".md", []),
    "csv": (".csv", ["--table", "gaps"]),
    "table markdown": (".md", ["--table", "jobs"]),
    "png": (".png", ["--width", "400"]),
    "svg": (".svg", ["--width", "400"]),
}


def _self(log: Path, out: Path) -> Path:
    return log


def _symlink(log: Path, out: Path) -> Path:
    out.symlink_to(log)
    return out


def _hard_link(log: Path, out: Path) -> Path:
    os.link(log, out)
    return out


def _directory(log: Path, out: Path) -> Path:
    out.mkdir()
    return out


def _loop(log: Path, out: Path) -> Path:
    out.symlink_to(out)
    return out


def _device(log: Path, out: Path) -> Path:
    os.mknod(out, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return out


def _missing_folder(log: Path, out: Path) -> Path:
    return out.parent / "no such folder" / out.name


def _planted_temp(log: Path, out: Path) -> Path:
    canary = out.parent / "canary.txt"
    canary.write_text("precious")
    for name in (f".{out.name}.tmp", f"{out.name}.tmp"):
        (out.parent / name).symlink_to(canary)
    return out


def _non_utf8(log: Path, out: Path) -> Path:
    return out.with_name(os.fsdecode(b"out\xff") + out.suffix)


def _keeps_mode(log: Path, out: Path) -> Path:
    out.write_text("old")
    out.chmod(0o640)
    return out


#: kind -> (makes the output path, expected exit status, words the refusal says)
KINDS: dict[str, tuple[Callable[[Path, Path], Path], int, str]] = {
    "the input itself": (_self, 2, "input"),
    "a symlink to the input": (_symlink, 2, "input"),
    "a hard link to the input": (_hard_link, 2, "input"),
    "a FIFO": (lambda log, out: out, 2, "FIFO"),
    "a directory": (_directory, 2, "directory"),
    "a symlink loop": (_loop, 2, "loop"),
    "a device": (_device, 2, "device"),
    "in a missing folder": (_missing_folder, 2, "No such file"),
    "beside a planted temp symlink": (_planted_temp, 0, ""),
    "a non-UTF-8 name": (_non_utf8, 0, ""),
    "an existing file (mode kept)": (_keeps_mode, 0, ""),
}
CASES = [
    pytest.param(fmt, kind, id=f"{fmt}: {kind}")
    for fmt in FORMATS
    for kind in KINDS
    if kind != "a device" or os.geteuid() == 0
]


@pytest.fixture(scope="module")
def output_runs(tmp_path_factory) -> tuple[Run, dict]:
    built = {}
    with contextlib.ExitStack() as fifos:
        for fmt, (suffix, extra) in FORMATS.items():
            for kind, (make, _, _) in KINDS.items():
                if kind == "a device" and os.geteuid() != 0:
                    continue
                folder = tmp_path_factory.mktemp("hostile-output")
                log = folder / f"run{suffix}"  # named so that --out LOG picks this format
                log.write_bytes(SAMPLE.read_bytes())
                out = make(log, folder / f"out{suffix}")
                if kind == "a FIFO":
                    fifos.enter_context(drained_fifo(out))
                argv = ["export", os.fspath(log), "--out", os.fspath(out), *extra]
                built[f"{fmt}: {kind}"] = (folder, log, out, argv, snapshot(folder))
        payload = [{"name": name, "argv": b[3]} for name, b in built.items()]
        run = run_script("drive.py", payload, 60.0, "name")
    return run, built


@pytest.mark.parametrize(("fmt", "kind"), CASES)
def test_a_hostile_output(fmt: str, kind: str, output_runs) -> None:
    run, built = output_runs
    assert run.hung_at is None, f"hung on {run.hung_at}"
    folder, log, out, _, before = built[f"{fmt}: {kind}"]
    result = run.results[f"{fmt}: {kind}"]
    err = result["stderr"]
    assert result["traceback"] is None and "Traceback" not in err, result["traceback"] or err
    _, code, says = KINDS[kind]
    assert result["code"] == code, err
    after = snapshot(folder)
    assert after[os.fspath(log)] == before[os.fspath(log)]  # the input, always
    if code == 2:
        assert display_path(out) in err or display_path(log) in err, err
        assert says.lower() in err.lower(), err
        assert after == before, "a refused export changed the folder"
        return
    target = Path(os.path.realpath(out))
    assert target.is_file() and target.stat().st_size > 0
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    assert changed == {os.fspath(target)}, changed
    if kind.startswith("an existing file"):
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
