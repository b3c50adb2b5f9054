"""One table of benchmark figures, printed at the end of ``make bench``.

Any benchmark adds its rows with ``add_row`` (the GUI redraw figures can join later);
each row has its value, the reference it is compared with and the ratio to the target.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Row:
    figure: str
    value: str
    reference: str
    ratio: float | None = None
    target: float | None = None  # the ratio we aim for (at most)


ROWS: list[Row] = []


def add_row(
    figure: str, value: str, reference: str, ratio: float | None = None, target: float | None = None
) -> None:
    ROWS.append(Row(figure, value, reference, ratio, target))


def render(rows: list[Row]) -> str:
    head = ("figure", "value", "reference", "ratio", "target", "")
    body = [
        (
            r.figure,
            r.value,
            r.reference,
            "" if r.ratio is None else f"{r.ratio:.2f}",
            "" if r.target is None else f"<= {r.target:g}",
            ""
            if r.target is None or r.ratio is None
            else ("ok" if r.ratio <= r.target else "MISS"),
        )
        for r in rows
    ]
    widths = [max(len(str(x[i])) for x in (head, *body)) for i in range(len(head))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(x, widths, strict=True)) for x in (head, *body)
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
