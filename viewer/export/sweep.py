"""A sweep as a terminal table, Markdown, CSV or JSON (``cuzk-timeline-sweep/1``)."""

from __future__ import annotations

from viewer.export.format import (
    S_DIGITS,
    Row,
    csv_cell,
    display_path,
    markdown_table,
    markdown_text,
    num,
    text_table,
)
from viewer.export.whatif import gib_pair, gib_range, memory_model_dict
from viewer.whatif.sweep import FORMAT, KNOBS, REGION, Sweep, value_text
from viewer.whatif.sweep import Row as SweepRow

HEAD = (
    "value",
    "log",
    "measured s/proof",
    "wall time / proofs (s)",
    "predicted s/proof",
    "band",
    "memory (GiB)",
    "",
)


def _value(s: Sweep, v: float) -> str:
    return f"{v:.4g}" if s.knob in ("kernel", "budget") else f"{v:.0f}"


def _s(x: float | None) -> str:
    """s/proof to three significant figures (runs of a few s and of a few minutes alike)."""
    return "-" if x is None else f"{x:.3g}"


def _band(r: SweepRow) -> str:
    if r.band is None or _s(r.band[0]) == _s(r.band[1]):
        return ""
    return f"{_s(r.band[0])}-{_s(r.band[1])}"


def _mark(s: Sweep, r: SweepRow) -> str:
    marks = []
    if r.run is not None and r.run is s.base:
        marks.append("base")
    if r.beyond:
        marks.append("beyond the logs")
    best, fits = s.best, s.best_within_ram
    if best is not None and r is best:
        marks.append("best")
    if fits is not None and r is fits and r is not best:
        marks.append(f"best within {s.ram_gib:g} GiB")
    if s.ram_gib is not None and r.memory_gib[1] > s.ram_gib:
        marks.append(f"may not fit {s.ram_gib:g} GiB")
    return ", ".join(marks)


def _cells(s: Sweep, r: SweepRow, name=display_path) -> Row:  # noqa: ANN001
    return (
        _value(s, r.value),
        name(r.run.name) if r.run else "(predicted)",
        _s(r.s_per_proof),
        _s(r.wall_s_per_proof),
        _s(r.predicted),
        _band(r),
        gib_range(r.memory_gib),
        _mark(s, r),
    )


def rows(s: Sweep) -> list[Row]:
    return [_cells(s, r) for r in s.rows]


def title(s: Sweep) -> str:
    words, unit = KNOBS[s.knob]
    runs = len({id(r.run) for r in s.rows if r.run is not None})
    return f"Sweep of {words}{f' ({unit.strip()})' if unit else ''}: {runs} runs"


def summary(s: Sweep) -> list[str]:
    """The lines under the table: the best value, the best region, the best within the RAM,
    how far the predictions were from the runs, what was set apart."""
    out = []
    best = s.best
    if best is not None:
        fig = s.figure(best)
        out.append(f"best ({s.basis}): {value_text(s.knob, best.value)}, {fig:.3g} s/proof")
        region = s.region
        if region is not None:
            lo, hi = region
            unit = KNOBS[s.knob][1]
            span = f"{s.knob} {_value(s, lo)}" + ("" if lo == hi else f"-{_value(s, hi)}") + unit
            out.append(f"best region ({s.basis}, within {REGION * 100:.0f} % of the best): {span}")
    if s.ram_gib is not None:
        fits = s.best_within_ram
        if fits is None:
            out.append(f"within {s.ram_gib:g} GiB: no value surely fits (memory upper end)")
        else:
            out.append(
                f"best within {s.ram_gib:g} GiB: {value_text(s.knob, fits.value)}, "
                f"{s.figure(fits):.3g} s/proof, {gib_range(fits.memory_gib)} GiB"
            )
    errs = [
        f"{_value(s, r.value)} {(r.predicted / r.s_per_proof - 1) * 100:+.1f} %"
        for r in s.rows
        if r.s_per_proof and r.predicted is not None and r.run is not s.base
    ]
    if errs:
        out.append(
            f"predicted from {display_path(s.base.name)} against measured: " + ", ".join(errs)
        )
    out.append(f"load: {s.load.describe()}")
    for run, why in s.apart:
        out.append(f"not in the sweep: {display_path(run.name)}: {why}")
    out += [f"note: {n}" for n in s.notes]
    return out


def sweep_text(s: Sweep) -> str:
    return "\n".join([title(s), "", text_table(HEAD, rows(s)), "", *summary(s)]) + "\n"


def sweep_markdown(s: Sweep) -> str:
    body = markdown_table(HEAD, [_cells(s, r, markdown_text) for r in s.rows])
    lines = "\n".join(f"- {markdown_text(x)}" for x in summary(s))
    return f"## {markdown_text(title(s))}\n\n{body}\n\n{lines}\n"


def sweep_csv(s: Sweep) -> str:
    head = (
        "knob,value,log,measured_s_per_proof,measured_wall_s_per_proof,predicted_s_per_proof,"
        "band_lo,band_hi,memory_gib_lo,memory_gib_hi,beyond_logs"
    )
    out = [head]
    for r in s.rows:
        band = r.band or (None, None)
        cells = [
            s.knob,
            repr(r.value),
            '"' + csv_cell(display_path(r.run.name)).replace('"', '""') + '"' if r.run else "",
            *(
                "" if x is None else f"{x:.6g}"
                for x in (r.s_per_proof, r.wall_s_per_proof, r.predicted, *band, *r.memory_gib)
            ),
            "true" if r.beyond else "false",
        ]
        out.append(",".join(cells))
    return "\n".join(out) + "\n"


def _row_dict(r: SweepRow) -> dict:
    return {
        "value": r.value,
        "log": display_path(r.run.name) if r.run else None,
        "measured": None
        if r.run is None
        else {
            "s_per_proof": num(r.s_per_proof, S_DIGITS),
            "wall_s_per_proof": num(r.wall_s_per_proof, S_DIGITS),
        },
        "predicted": {
            "s_per_proof": num(r.predicted, S_DIGITS),
            "wall_s_per_proof": num(r.predicted_wall, S_DIGITS),
            "band": None
            if r.band is None
            else [num(r.band[0], S_DIGITS), num(r.band[1], S_DIGITS)],
            "memory_gib": gib_pair(r.memory_gib),
            "beyond_logs": r.beyond,
        },
    }


def _best_dict(s: Sweep, r: SweepRow | None) -> dict | None:
    if r is None:
        return None
    return {"value": r.value, "s_per_proof": num(s.figure(r), S_DIGITS), "from": s.basis}


def sweep_dict(s: Sweep) -> dict:
    region = s.region
    return {
        "format": FORMAT,
        "knob": s.knob,
        "base": display_path(s.base.name),
        "rows": [_row_dict(r) for r in s.rows],
        "best": _best_dict(s, s.best),
        "best_region": None if region is None else list(region),
        "ram_gib": s.ram_gib,
        "best_within_ram": _best_dict(s, s.best_within_ram),
        "apart": [{"log": display_path(r.name), "why": why} for r, why in s.apart],
        "load": s.load.describe(),
        "memory_model": memory_model_dict(s.memory_model),
        "notes": list(s.notes),
    }
