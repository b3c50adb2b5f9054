"""A log that shrinks while it is read (truncated or rotated in place) says so (issue 27
item 7): its figures are of the part read."""

from __future__ import annotations

import os

import pytest

from viewer.io import open_log
from viewer.sim.model import SimConfig, simulate
from viewer.sim.writer import WriteOptions, write


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("shrink") / "run.log"
    write(simulate(SimConfig(sectors=600, seed=2)), path, WriteOptions())
    return path


def test_a_log_cut_while_it_is_read_says_so(big_log, tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "live.log"
    path.write_bytes(big_log.read_bytes())
    size = path.stat().st_size
    cut = []

    def progress(done: int, total: int) -> None:
        if not cut and 0 < done < total:
            os.truncate(path, size // 3)  # logrotate's copytruncate, mid-read
            cut.append(done)

    tl = open_log(path, progress=progress)
    assert cut, "the read reported no progress before its end"
    notes = [n for s in tl.sessions for n in s.notes]
    assert any(f"shrank while it was read, from {size} to {size // 3} bytes" in n for n in notes)


def test_a_log_read_whole_has_no_such_note(big_log) -> None:  # noqa: ANN001
    notes = [n for s in open_log(big_log).sessions for n in s.notes]
    assert not any("shrank" in n for n in notes)
