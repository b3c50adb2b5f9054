"""A sweep names its knob as people write it ("GPU workers per GPU", not "Gpu workers per
gpu"), from one table (``viewer.whatif.sweep.KNOBS``) for the chart and the text."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from viewer.export.sweep import title
from viewer.io import open_log
from viewer.io.facts import facts
from viewer.ui.windows.sweep_chart import chart_bytes, chart_title
from viewer.whatif.sweep import KNOBS, Run, knob_label, knob_values, sweep

SECOND = Path(__file__).resolve().parents[1] / "whatif" / "data" / "h200_second"

NAMES = {
    # knob: chart title, axis label, text title
    "gw": (
        "GPU workers per GPU sweep: 2 runs, predicted from base.log",
        "GPU workers per GPU (gw)",
        "Sweep of GPU workers per GPU: 2 runs",
    ),
    "pw": (
        "Partition workers sweep: 2 runs, predicted from base.log",
        "partition workers (pw)",
        "Sweep of partition workers: 2 runs",
    ),
    "kernel": (
        "Kernel time sweep: 2 runs, predicted from base.log",
        "kernel time, ms",
        "Sweep of kernel time (ms): 2 runs",
    ),
    "budget": (
        "Memory budget sweep: 2 runs, predicted from base.log",
        "memory budget, GiB",
        "Sweep of memory budget (GiB): 2 runs",
    ),
}


def test_every_knob_has_its_names() -> None:
    assert set(NAMES) == set(KNOBS)


@pytest.mark.parametrize("knob", sorted(NAMES))
def test_the_chart_and_the_text_name_the_knob_as_people_write_it(knob: str) -> None:
    a, b = SimpleNamespace(), SimpleNamespace()
    rows = [SimpleNamespace(run=a), SimpleNamespace(run=b), SimpleNamespace(run=None)]
    s = SimpleNamespace(knob=knob, rows=rows, base=SimpleNamespace(name="/runs/base.log"))
    chart, axis, text = NAMES[knob]
    assert chart_title(s) == chart
    assert knob_label(knob) == axis
    assert title(s) == text


def test_the_drawn_chart_carries_the_names() -> None:
    path = SECOND / "base8.log.gz"
    session = open_log(path).sessions[0]
    f = facts(path)
    run = Run(path.name, session, knob_values(session, {"pw": f.pw, "gw": f.gw}), cpus=f.cpus)
    s = sweep([run], "gw", [1, 2, 3])
    svg = chart_bytes(s, "a.svg").decode()
    assert "<title>GPU workers per GPU sweep</title>" in svg
    assert "GPU workers per GPU sweep: 1 run, predicted from base8.log.gz" in svg
    assert "GPU workers per GPU (gw)" in svg
