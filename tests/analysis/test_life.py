"""One partition's life, stage by stage: the durations are ``stages``', the times line up."""

from __future__ import annotations

import math

import pytest

from tests.analysis.builders import call, pipeline, session
from viewer.analysis.life import STAGES, life
from viewer.analysis.stages import stages


def test_stages_follow_one_another_with_stages_figures() -> None:
    s = pipeline([40_000.0, 80_000.0], synth=35_000)
    st = stages(s)
    for row in range(len(s.partitions)):
        lf = life(s, row)
        assert [x.key for x in lf.stages] == [k for k in STAGES if k != "held"]
        by = {x.key: x for x in lf.stages}
        assert by["synthesis"].ms == st["synth_ms"][row]
        assert by["queue"].ms == st["queue_wait_ms"][row]
        assert by["kernel"].ms == st["kernel_ms"][row]
        # GPU_START -> prep -> mutex -> kernel -> post -> GPU_END, end to end.
        assert by["prep"].end == by["mutex"].start and by["mutex"].end == by["kernel"].start
        assert by["kernel"].end == by["post"].start
        assert by["post"].end == s.partitions["gpu_end"][row]
        for x in lf.stages:
            if math.isfinite(x.ms):  # a worker's first call has no dispatch figure
                assert x.end - x.start == pytest.approx(x.ms), x.key
        assert set(lf.kernels) == {"ntt_msm_h", "batch_add", "tail_msm"}
        assert lf.start == s.partitions["synth_start"][row]


def test_a_full_queue_and_an_open_call() -> None:
    s = session(
        call("j", 0, 5000, None, 0, synth_start=0, synth_end=1000, queued=3000, pickup=4990),
    )
    lf = life(s, 0)
    held = lf.stage("held")
    assert (held.start, held.end, held.ms) == (1000, 3000, 2000)
    assert lf.gpu_open and math.isnan(lf.stage("post").ms)
    assert lf.kernels == {} and lf.job_id == "j" and lf.partition == 0
