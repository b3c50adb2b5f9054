from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.analysis.builders import call, pipeline, session
from viewer.export.report import SCHEMA, report_dict, report_markdown, report_text
from viewer.model import Timeline


def warm_timeline() -> Timeline:
    return Timeline(Path("run.log"), [pipeline([35_000, 75_000, 75_010, 75_020, 75_030])])


def test_json_schema_and_types() -> None:
    d = report_dict(warm_timeline())
    json.dumps(d, allow_nan=False)  # strict JSON: no NaN
    assert d["schema"] == SCHEMA and d["source"] == "run.log"
    (s,) = d["sessions"]
    for key in ("index", "events", "skipped_lines", "open_intervals"):
        assert type(s[key]) is int
    (g,) = s["gpus"]
    assert g["gpu"] == 0 and g["workers"] == [0, 1]
    assert g["idle_gaps"] == [
        {
            "start_ms": 74560.0,
            "end_ms": 75000.0,
            "ms": 440.0,
            "cross_sector": True,
            "starved": True,
        }
    ]
    assert [j["partitions"] for j in s["jobs"]] == [10] * 5
    assert s["transitions"][0] == {
        "from": "job0",
        "to": "job1",
        "time_ms": 75000.0,
        "gap_ms": 440.0,
        "overlap_ms": 0.0,
        "starved": True,
        "cold_start": True,
        "worker": 0,
    }
    assert s["kernel"]["source"] == "cuzk_timing" and s["kernel"]["mean_ms"] == 3746
    assert set(s["kernel"]["breakdown_ms"]) == {"ntt_msm_h", "batch_add", "tail_msm"}
    assert s["throughput"]["theoretical_s_per_proof"] == pytest.approx(37.46)
    assert s["verdict"]["kind"] == "gpu-bound"
    assert isinstance(s["gpu_ms_total"], float) and isinstance(s["synth_ms_total"], float)


def test_json_nan_becomes_null_and_session_filter() -> None:
    t = Timeline(Path("x"), [session(index=0), session(call("a", 0, 0, 5, 0), index=1)])
    d = report_dict(t, session=1)
    # "session" counts from 1, as people read it; "index" is the list position
    assert [(s["session"], s["index"]) for s in d["sessions"]] == [(2, 1)]
    assert d["sessions"][0]["throughput"]["measured_s_per_proof"] is None
    json.dumps(report_dict(t), allow_nan=False)
    with pytest.raises(ValueError, match=r"no session 8 in x \(sessions are numbered 1-2\)"):
        report_dict(t, session=7)


def test_markdown_has_the_reference_shape() -> None:
    md = report_markdown(warm_timeline())
    assert "| metric | value |" in md
    assert "| mean CUDA kernel time per partition | 3746 ms |" in md
    assert "| serial CUDA time per sector (10 partitions) | 37.5 s |" in md
    assert "| sector 0->1 | 440 ms (cold start) | 0 ms |" in md
    assert "| sector 1->2 | 0 ms | 3746 ms |" in md
    assert "**Verdict (gpu-bound):** GPU-bound" in md


def test_markdown_gpu_ms_source_says_upper_bound() -> None:
    t = Timeline(Path("x"), [pipeline([35_000 + 10 * j for j in range(3)], timing=False)])
    md = report_markdown(t)
    assert "GPU call time (upper bound: no CUZK_TIMING lines)" in md


def test_text_report_and_range() -> None:
    text = report_text(warm_timeline(), rng=(100_000, 150_000))
    assert "range 100000-150000 ms" in text
    assert "sector 1->2" in text and "sector 0->1" not in text
    assert "Verdict (insufficient-data)" in text


def test_many_skipped_lines_warn_next_to_the_verdict(tmp_path: Path) -> None:
    sample = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"
    lines = sample.read_text().splitlines(True)
    timeline_lines = [i for i, line in enumerate(lines) if line.startswith("TIMELINE,")]
    for i in timeline_lines[::10]:  # 10 % of the events lose their offset
        lines[i] = lines[i].replace("TIMELINE,", "TIMELINE,?", 1)
    path = tmp_path / "run.log"
    path.write_text("".join(lines))
    from viewer.io import open_log

    t = open_log(path)
    text = report_text(t)
    verdict_at = text.index("Verdict (")
    warning_at = text.index("Warning: 30 of 300 TIMELINE lines (10.0 %) were skipped")
    assert verdict_at < warning_at < text.index("  - ", verdict_at)
    assert "**Warning:** 30 of 300" in report_markdown(t)
    (s,) = report_dict(t)["sessions"]
    assert s["verdict"]["warning"].startswith("30 of 300 TIMELINE lines")
    assert (
        report_dict(Timeline(path, [pipeline([1.0, 2.0])]))["sessions"][0]["verdict"]["warning"]
        is None
    )


def test_the_report_says_how_many_kernel_blocks_were_ambiguous_or_unmatched() -> None:
    from viewer.io import open_log

    data = Path(__file__).resolve().parents[1] / "io" / "data"
    t = open_log(data / "two_gpus_block_without_its_gpu_start.log")
    (s,) = report_dict(t)["sessions"]
    k = s["kernel"]
    session = t.sessions[0]
    assert k["unattributed_blocks"] == session.unattributed_blocks >= 1
    assert k["blocks"] == session.kernel_blocks
    assert k["unattributed_ms"] == pytest.approx(session.unattributed_kernel_ms)
    text = report_text(t)
    row = f"{session.ambiguous_blocks} / {session.unattributed_blocks} of {session.kernel_blocks}"
    assert "CUZK_TIMING blocks: ambiguous / matched to no call" in text and row in text
    assert "CUZK_TIMING blocks" not in report_text(warm_timeline())


def test_markdown_title_and_notes_are_text(tmp_path: Path) -> None:
    t = warm_timeline()
    t.source = tmp_path / "<b>run</b>.log"
    t.sessions[0].notes.append("lines after <script> lost")
    md = report_markdown(t)
    assert "<b>" not in md and "<script>" not in md
    assert "&lt;b&gt;run&lt;/b&gt;.log" in md and "after &lt;script&gt; lost" in md


def test_a_report_lets_go_of_each_sessions_tables_unless_they_were_kept() -> None:
    """A log of thousands of daemon runs: the report held every run's tables at once (539 MB
    for 3000 restarts of a 13.6 MB log); the window's own stay."""
    from viewer.analysis import summarize
    from viewer.analysis.cache import holds

    t = Timeline(Path("x"), [warm_timeline().sessions[0], warm_timeline().sessions[0]])
    t.sessions[1].index = 1
    summarize(t.sessions[1])  # as the window would have
    assert not holds(t.sessions[0]) and holds(t.sessions[1])
    assert len(report_dict(t)["sessions"]) == 2
    assert not holds(t.sessions[0])  # let go after its summary
    assert holds(t.sessions[1])  # kept: it was there before


LINUX_ONLY = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="sessions fork processes on Linux only"
)


def _many_runs(n: int) -> Timeline:
    """A log of ``n`` daemon runs, each different (ready times shift with the run)."""
    runs = [pipeline([35_000 + 100 * k, 75_000, 75_010 + 7 * k, 75_020]) for k in range(n)]
    for k, s in enumerate(runs):
        s.index = k
    return Timeline(Path("runs.log"), runs)


@pytest.mark.parametrize("render", [report_text, report_markdown, report_dict])
def test_many_runs_are_summarized_in_processes_with_the_same_result(render, monkeypatch):
    """A log of thousands of daemon runs is reported by ``jobs`` forked processes (the
    3000-restart log in 2.6 s instead of 4.6 s on 2 cores): the same report, in order."""
    from viewer.export import report

    monkeypatch.setattr(report, "PARALLEL_SESSIONS", 3)
    monkeypatch.setattr(report.os, "cpu_count", lambda: 2)  # processes even on one core
    t = _many_runs(7)
    assert render(t, jobs=2) == render(t, jobs=1)
    assert render(t, 4, jobs=2) == render(t, 4, jobs=1)  # one session: no processes


@LINUX_ONLY
def test_the_sessions_of_many_runs_are_summarized_elsewhere_and_in_order(monkeypatch):
    import os

    from viewer.export import report

    monkeypatch.setattr(report, "PARALLEL_SESSIONS", 3)
    monkeypatch.setattr(report.os, "cpu_count", lambda: 2)  # processes even on one core
    t = _many_runs(7)
    got = report.map_sessions(t, None, None, lambda sm: (os.getpid(), sm.session.index), 2)
    assert [i for _, i in got] == list(range(7))
    assert os.getpid() not in {pid for pid, _ in got}
    few = report.map_sessions(t, 1, None, lambda sm: os.getpid(), 2)
    assert few == [os.getpid()]


@LINUX_ONLY
def test_many_runs_are_summarized_in_spans_of_a_few_hundred(monkeypatch):
    """A forked process holds a span's parts until it is done: many runs are cut into spans
    of about ``SPAN_SESSIONS`` (30 000 restarts in 8 spans held ~25 MB more a process),
    and the report is the same, in order."""
    from viewer.export import report

    monkeypatch.setattr(report, "PARALLEL_SESSIONS", 3)
    monkeypatch.setattr(report, "SPAN_SESSIONS", 2)
    monkeypatch.setattr(report.os, "cpu_count", lambda: 2)
    spans = []
    real = report.process_map
    monkeypatch.setattr(
        report, "process_map", lambda f, items, jobs: spans.extend(items) or real(f, items, jobs)
    )
    t = _many_runs(21)
    assert report_text(t, jobs=2) == report_text(t, jobs=1)
    assert len(spans) == 10 and spans[0][0][0] == 0 and spans[-1][0][1] == 21
    assert max(b - a for ((a, b),) in spans) <= 3


@LINUX_ONLY
def test_a_killed_process_leaves_the_sessions_to_this_one(monkeypatch):
    """A forked process that dies (the kernel's out-of-memory killer) breaks the pool:
    the report is computed here instead, never hung on a dead process."""
    import os

    from viewer.export import report

    monkeypatch.setattr(report, "PARALLEL_SESSIONS", 3)
    monkeypatch.setattr(report.os, "cpu_count", lambda: 2)  # processes even on one core
    parent = os.getpid()

    def part(sm):
        if os.getpid() != parent:
            os._exit(9)  # dies as a killed process would
        return sm.session.index

    assert report.map_sessions(_many_runs(7), None, None, part, 2) == list(range(7))


def test_a_breakdown_adding_to_more_than_the_kernel_time_says_by_how_much() -> None:
    from tests.analysis.test_kernels import domain_md_call

    over = Timeline(Path("x"), [session(domain_md_call(0, 0), domain_md_call(1, 1))])
    row = "ntt_msm_h 3117 ms / batch_add 640 ms / tail_msm 125 ms (the parts add to 103.6 % of it)"
    assert row in report_text(over) and row in report_markdown(over)
    assert "the parts add to" not in report_text(warm_timeline())


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_report_comes_a_session_at_a_time_with_the_same_bytes(jobs, monkeypatch):
    """``report`` writes each session as it is summarized (a log of thousands of daemon runs
    starts printing at once, and its report is never held whole): the pieces join into
    exactly the report made at once, in every format, in processes or not."""
    import orjson

    from viewer.export import report
    from viewer.export.format import json_bytes

    monkeypatch.setattr(report, "PARALLEL_SESSIONS", 3)
    monkeypatch.setattr(report.os, "cpu_count", lambda: 2)  # processes even on one core
    t = _many_runs(7)
    parts = list(report.report_json_parts(t, jobs=jobs))
    # The head, each session in pieces (its tables a chunk of rows at a time), the end.
    assert len(parts) >= 7 + 2 and parts[0].startswith(b'{"schema"') and parts[-1] == b"]}\n"
    assert b"".join(parts) == json_bytes(report_dict(t, jobs=1))
    assert orjson.loads(b"".join(parts))["sessions"][6]["index"] == 6
    for pieces, whole in (
        (report.report_text_parts, report_text),
        (report.report_markdown_parts, report_markdown),
    ):
        got = list(pieces(t, jobs=jobs))
        assert len(got) >= 9 and "".join(got) == whole(t, jobs=1)
    one = list(report.report_text_parts(t, 3, jobs=jobs))
    assert "".join(one) == report_text(t, 3) and len(one) == 3


def test_a_session_is_summarized_only_when_its_piece_is_asked_for() -> None:
    from viewer.export import report

    t = _many_runs(3)
    made: list[int] = []
    pieces = report.iter_sessions(t, None, None, lambda sm: made.append(sm.session.index), 1)
    next(pieces)
    assert made == [0]  # the first is written before the second is summarized
    list(pieces)
    assert made == [0, 1, 2]
    with pytest.raises(ValueError):  # a bad session says so before anything is made
        report.iter_sessions(t, 9, None, lambda sm: None, 1)


def test_the_markdown_transition_table_in_chunks_is_the_whole_table(monkeypatch) -> None:
    """``report --markdown`` writes its transition table a chunk of rows at a time (1.5 M
    jobs' rows formatted at once took 1 GB): at 2 rows a chunk, the text of the table made
    whole, in processes or not."""
    from viewer.export import report
    from viewer.export.format import markdown_table
    from viewer.io import open_log

    t = open_log(Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw20.log")
    whole = report_markdown(t)
    sm = next(report.iter_sessions(t, None, None, lambda sm: sm))
    assert markdown_table(report.TRANSITION_HEAD, report.transition_rows(sm)) in whole
    from viewer.export import format as format_module

    monkeypatch.setattr(format_module, "ROWS_CHUNK", 2)  # the table's chunks are format's
    assert report_markdown(t) == whole
    assert "".join(report.report_markdown_parts(t, jobs=2)) == whole
