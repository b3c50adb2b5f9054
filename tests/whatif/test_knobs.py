"""Knobs: every bad value is refused with a message naming the option and its range."""

from __future__ import annotations

import math

import pytest

from viewer.whatif import KnobError, Knobs


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"gw": 0}, "--gw must be a whole number from 1 to 64, not 0"),
        ({"gw": True}, "--gw must be a whole number"),
        ({"gw": 2.5}, "--gw must be a whole number"),
        ({"pw": 2**40}, "--pw must be a whole number from 1 to 1024"),
        ({"gpus": -1}, "--gpus must be a whole number from 1 to 64"),
        ({"queue_cap": 0}, "--queue-cap must be a whole number"),
        ({"kernel_ms": math.nan}, "--kernel-ms must be a finite number more than 0"),
        ({"kernel_ms": 0.0}, "--kernel-ms must be a finite number more than 0"),
        ({"prep_ms": math.inf}, "--prep-ms must be a finite number"),
        ({"post_ms": 1e300}, "--post-ms must be a finite number more than 0 and at most 3.6e+06"),
        ({"synth_scale": 0.0}, "--synth-scale must be a finite number at least 0.01"),
        ({"synth_scale": -math.inf}, "--synth-scale must be a finite number"),
        ({"kernel_scale": 101.0}, "at most 100"),
        ({"kernel_ms": 10.0, "kernel_scale": 0.5}, "--kernel-ms and --kernel-scale both set"),
    ],
)
def test_bad_knobs_are_refused(kw: dict, message: str) -> None:
    with pytest.raises(KnobError, match=message.replace("+", r"\+").replace(".", r"\.")):
        Knobs(**kw)


def test_changed_and_described_against_what_they_replace() -> None:
    k = Knobs(gw=1, kernel_ms=1824.0, prep_scale=0.5)
    assert k.changed() == {"gw": 1, "kernel_ms": 1824.0, "prep_scale": 0.5}
    assert k.describe() == "gw 1, kernel 1824 ms, prep x0.5"
    was = {"gw": 2, "kernel": 3746.0, "prep": 1700.0}
    assert k.describe(was) == "gw 2 -> 1, kernel 3746 -> 1824 ms, prep x0.5 (1700 -> 850 ms)"
    assert Knobs().describe() == "no change"
    assert Knobs(gw=2, pw=12).describe({"gw": 2, "pw": 10}) == "gw 2 (as measured), pw 10 -> 12"
