"""Write the bundled sample logs: ``python -m viewer.sim.samples sample_logs``.

Deterministic: the same code writes the same bytes, so the committed files
can be regenerated and diffed (``make samples``).  What each file shows and
the figures it should produce are in ``sample_logs/README.md``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from viewer.sim.damage import damaged_log
from viewer.sim.describe import describe
from viewer.sim.model import Schedule, SimConfig, budget_gated, simulate
from viewer.sim.reference import solve
from viewer.sim.writer import WriteOptions, render

Made = tuple[Schedule, WriteOptions]


def phase8() -> Made:
    """The published Phase 8 run (pw=10, 5 sectors, one GPU, gw=2), figures exact."""
    return solve(), WriteOptions(noise=0.35, seed=8)


def phase7_gw1() -> Made:
    """One worker per GPU: every call's CPU work leaves the GPU idle for a moment."""
    cfg = SimConfig(
        sectors=4, pw=20, gw=1, seed=7, synth_ms=37000.0, warmup_ms=1400.0, dispatch_ms=45.0
    )
    return simulate(cfg), WriteOptions(noise=0.35, seed=7)


def two_gpus() -> Made:
    """Two GPUs with two workers each."""
    cfg = SimConfig(sectors=10, pw=20, gw=2, gpus=2, seed=22, synth_ms=36000.0, warmup_ms=1400.0)
    return simulate(cfg), WriteOptions(noise=0.35, seed=22)


def monolithic_mixed() -> Made:
    """Mixed proof kinds: monolithic PoSt and SnapDeals calls among porep-c2 partitions."""
    cfg = SimConfig(
        sectors=14,
        pw=10,
        gw=2,
        seed=5,
        kinds=(("porep-c2", 1.0), ("snap-update", 1.0), ("window-post", 1.5), ("winning-post", 2)),
        interval_ms=9000.0,
    )
    return simulate(cfg), WriteOptions(noise=0.35, seed=5)


#: The pw=20 A/B workload: 20 concurrent syntheses contend for the CPU, so each takes
#: ~95 s and gw=2 becomes synthesis-bound; a call's CPU steps are lighter than in the
#: pw=10 run (prep ~1 s) and dispatch after a call takes 10-200 ms.
PW20 = SimConfig(
    sectors=8,
    pw=20,
    gw=2,
    seed=20,
    synth_ms=95000.0,
    prep_ms=1000.0,
    b_g2_ms=280.0,
    warmup_ms=1400.0,
    dispatch_ms=45.0,
)


def phase8_pw20() -> Made:
    """Phase 8 (gw=2) at pw=20: the A side of the published Phase 7 vs 8 comparison."""
    cfg = replace(PW20, gw=2)
    return simulate(cfg), WriteOptions(noise=0.2, seed=20)


def phase7_pw20() -> Made:
    """Phase 7 (gw=1) at pw=20, same workload and seed as ``phase8_pw20``."""
    cfg = replace(PW20, gw=1)
    return simulate(cfg), WriteOptions(noise=0.2, seed=20)


def budget_gated_200() -> Made:
    """Upstream's current daemon: a 200 GiB memory budget sizes synthesis (14 workers), and
    beside SRS and PCE (69 GiB) it has room for 9 partitions' reservations at once."""
    cfg = budget_gated(SimConfig(sectors=8, seed=26, warmup_ms=1400.0, dispatch_ms=45.0), 200)
    return simulate(cfg), WriteOptions(noise=0.2, seed=26)


SAMPLES: dict[str, Callable[[], Made | bytes]] = {
    "phase8_pw10_5sectors.log": phase8,
    "phase7_gw1.log": phase7_gw1,
    "two_gpus.log": two_gpus,
    "monolithic_mixed.log": monolithic_mixed,
    "damaged.log": damaged_log,
    "phase8_pw20.log": phase8_pw20,
    "phase7_pw20.log": phase7_pw20,
    "budget_gated.log": budget_gated_200,
}


def command(made: Made, output: str) -> str:
    """The `python -m viewer simulate` line that writes the same bytes as ``made``."""
    cfg, o = made[0].config, made[1]
    default, args = SimConfig(), []
    for name, value in vars(cfg).items():
        if value == getattr(default, name):
            continue
        if name == "pw" and cfg.budget_gib is not None:
            if budget_gated(cfg, cfg.budget_gib) != cfg:
                raise ValueError("the workers are not the budget's: not reachable from the CLI")
            continue  # `simulate --budget-gib` sizes them
        if name == "kinds":
            args.append("--kinds " + ",".join(f"{k}={_num(w)}" for k, w in value))
        else:
            # `simulate` names every option after its SimConfig field.
            args.append(f"--{name.replace('_', '-')} {_num(value)}")
    if o.seed != cfg.seed or o.wall_start_ms != WriteOptions().wall_start_ms:
        raise ValueError("the log options are not reachable from the command line")
    for flag, on in (
        ("--journald", o.journald),
        ("--crlf", o.crlf),
        ("--no-cuzk-timing", not o.cuzk_timing),
        ("--no-tracing", not o.tracing),
    ):
        if on:
            args.append(flag)
    if o.noise:
        args.append(f"--noise {_num(o.noise)}")
    if o.era != "new":
        args.append(f"--era {o.era}")
    if o.disorder_ms != WriteOptions().disorder_ms:
        args.append(f"--disorder-ms {o.disorder_ms}")
    return " ".join(["python -m viewer simulate", *args, "-o", output])


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def write_samples(outdir: Path, names: list[str] | None = None) -> list[Path]:
    """Write the samples (all, or the named ones) into ``outdir``."""
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, make in SAMPLES.items():
        if names and name not in names:
            continue
        made = make()
        path = outdir / name
        path.write_bytes(made if isinstance(made, bytes) else render(*made).encode())
        paths.append(path)
    return paths


def main(argv: list[str]) -> int:
    if not argv:
        print(
            "usage: python -m viewer.sim.samples OUTDIR [NAME ...] | --describe | --commands",
            file=sys.stderr,
        )
        return 2
    if argv[0] == "--commands":
        for name, make in SAMPLES.items():
            made = make()
            if not isinstance(made, bytes) and make not in (phase8,):
                print(command(made, f"sample_logs/{name}"))
        return 0
    if argv[0] == "--describe":
        for name, make in SAMPLES.items():
            made = make()
            if not isinstance(made, bytes):
                print(f"## {name}\n{describe(made[0])}\n")
        return 0
    for p in write_samples(Path(argv[0]), argv[1:] or None):
        print(f"{p} ({p.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
