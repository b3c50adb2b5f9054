"""Where the kernels of a CUDA region are drawn: in turn from its start, inside it."""

from __future__ import annotations

import numpy as np

from tests.analysis.builders import call, session
from viewer.lanes.data import KernelParts


def test_parts_run_in_turn_and_are_scaled_into_the_region() -> None:
    s = session(
        # Their figures add up to the region: laid end to end, with the barrier wait.
        call("a", 0, 0, 9000, 0, kernel_start=1000, kernel_ms=4000, ntt_msm_h_ms=3000,
             barrier_wait_ms=100, batch_add_ms=600, tail_msm_ms=300),
        # They add up to more (3117 + 640 + 125 > 3746, as in domain.md): scaled to fit.
        call("a", 1, 0, 9000, 1, kernel_start=2000, kernel_ms=3746, ntt_msm_h_ms=3117,
             barrier_wait_ms=0, batch_add_ms=640, tail_msm_ms=125),
        # No breakdown: nothing to draw.
        call("a", 2, 0, 9000, 2, kernel_start=2000, kernel_ms=3000),
    )  # fmt: skip
    start, end = KernelParts(s).spans(np.arange(3))
    assert start[0].tolist() == [1000, 4100, 4700] and end[0].tolist() == [4000, 4700, 5000]
    scale = 3746 / (3117 + 640 + 125)
    assert end[1][2] == 2000 + 3746  # the last one ends with the region
    assert end[1][0] - start[1][0] == 3117 * scale
    assert np.isnan(start[2]).all() and np.isnan(end[2]).all()
