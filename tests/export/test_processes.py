"""``process_map``: work over processes, in order, with few items ahead of the reader."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from viewer.export import processes


def _square(x: int) -> int:
    return x * x


class _Recording(ThreadPoolExecutor):
    """A pool (threads stand in for processes) that counts what it was handed."""

    submitted = 0

    def submit(self, fn, /, *args, **kwargs):
        type(self).submitted += 1
        return super().submit(fn, *args, **kwargs)


def test_results_come_in_order_with_few_items_ahead(monkeypatch) -> None:
    """A report of 3000 daemon runs written to a pipe nobody reads: every process's results
    had piled up in this one (``pool.map`` hands out all the work at once).  Now at most
    ``AHEAD`` items per process are ahead of the one taken."""
    monkeypatch.setattr(processes, "_executor", lambda jobs: _Recording(jobs))
    _Recording.submitted = 0
    work = [(k,) for k in range(100)]
    results = processes.process_map(_square, work, 2)
    assert next(results) == 0
    assert _Recording.submitted <= processes.AHEAD * 2 + 1
    assert list(results) == [k * k for k in range(1, 100)]
    assert _Recording.submitted == 100


def test_a_reader_that_stops_early_leaves_the_rest_unrun(monkeypatch) -> None:
    monkeypatch.setattr(processes, "_executor", lambda jobs: _Recording(jobs))
    _Recording.submitted = 0
    results = processes.process_map(_square, [(k,) for k in range(100)], 2)
    assert [next(results) for _ in range(3)] == [0, 1, 4]
    results.close()
    assert _Recording.submitted <= processes.AHEAD * 2 + 3


def test_one_job_runs_here() -> None:
    assert list(processes.process_map(_square, [(2,), (3,)], 1)) == [4, 9]
