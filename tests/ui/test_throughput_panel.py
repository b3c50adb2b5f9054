"""The throughput panel shows the verdict, and beside it a warning when many lines were damaged."""

from __future__ import annotations

from pathlib import Path

from viewer.analysis import summarize
from viewer.io import open_log
from viewer.ui.panels.throughput import ThroughputPanel

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"


def damaged(tmp_path: Path, every: int) -> Path:
    """The sample with the offset of every ``every``-th TIMELINE line broken."""
    out, k = [], 0
    for line in SAMPLE.read_text().splitlines(True):
        if line.startswith("TIMELINE,"):
            if k % every == 0:
                line = line.replace("TIMELINE,", "TIMELINE,x", 1)
            k += 1
        out.append(line)
    path = tmp_path / "damaged.log"
    path.write_text("".join(out))
    return path


def test_a_clean_log_has_no_warning(qtbot) -> None:
    panel = ThroughputPanel()
    qtbot.addWidget(panel)
    panel.set_summary(summarize(open_log(SAMPLE).sessions[0]))
    assert panel.verdict.text().startswith("GPU-bound")
    assert panel.warning.isHidden()


def test_over_one_percent_skipped_is_said_next_to_the_verdict(qtbot, tmp_path: Path) -> None:
    panel = ThroughputPanel()
    qtbot.addWidget(panel)
    panel.show()
    sm = summarize(open_log(damaged(tmp_path, 20)).sessions[0])
    panel.set_summary(sm)
    assert not panel.warning.isHidden()
    assert "15 of 300 TIMELINE lines (5.0 %) were skipped" in panel.warning.text()
    panel.clear()
    assert panel.warning.isHidden()
    # 1 line in 300 (0.3 %) is under the threshold.
    panel.set_summary(summarize(open_log(damaged(tmp_path, 1000)).sessions[0]))
    assert panel.warning.isHidden()


def test_jobs_done_in_the_same_millisecond_say_so_not_that_two_are_needed(qtbot) -> None:
    """Two completed jobs, both done at the same millisecond: the measured row said "needs 2
    completed jobs" beside "Jobs completed: 2"."""
    log = Path(__file__).resolve().parents[1] / "io" / "data"
    panel = ThroughputPanel()
    qtbot.addWidget(panel)
    session = open_log(log / "two_gpus_block_without_its_gpu_start.log").sessions[0]
    panel.set_summary(summarize(session))
    shown = panel.form.text("measured")
    assert "same ms" in shown and "needs 2" not in shown
    panel.set_summary(summarize(open_log(SAMPLE.with_name("damaged.log")).sessions[0]))
    assert "needs 2 completed jobs" in panel.form.text("measured")


def test_the_session_notes_stay_readable_under_the_verdict(qtbot) -> None:
    """The reader's notes (blocks matched by best effort, blocks no call took) were only in
    the status bar for 10 s, cut at its width; the panel keeps them, whole."""
    log = Path(__file__).resolve().parents[1] / "io" / "data"
    panel = ThroughputPanel()
    qtbot.addWidget(panel)
    panel.show()
    session = open_log(log / "two_gpus_block_without_its_gpu_start.log").sessions[0]
    panel.set_summary(summarize(session))
    assert panel.notes.isVisible()
    assert panel.notes.text().splitlines() == [f"Note: {n}" for n in session.notes]
    panel.set_summary(summarize(open_log(SAMPLE).sessions[0]))  # a clean log: none
    assert panel.notes.isHidden() and panel.notes.text() == ""


def test_a_post_daemons_thousands_of_jobs_are_grouped(qtbot, tmp_path) -> None:  # noqa: ANN001
    """Jobs every 100 ms, kernels of 90 ms: "2 000 jobs" and "0.090 s/proof" (they read
    "2000 jobs" beside "2 000" partitions, and "0.1 s/proof" for both the floor and the
    measured pace beside a ratio of 0.90)."""
    from tests.hostile.dense import dense_jobs

    panel = ThroughputPanel()
    qtbot.addWidget(panel)
    panel.set_summary(summarize(open_log(dense_jobs(tmp_path / "post.log", 2000)).sessions[0]))
    how = panel.how.text()
    assert "of the 2\u2009000 jobs completed" in how and "of the 2\u2009000 partitions" in how
    assert "(2\u2009000 jobs, the arrival floor)" in panel.verdict.text()
    assert "the kernel floor, 0.090 s/proof" in panel.verdict.text()
