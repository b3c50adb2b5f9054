"""Kernel-time panel: true CUDA kernel time in the selected range, and where it went.

Totals are clipped to the range (a kernel half inside counts half); the mean is over whole
kernels of the partitions touching it.  The captions say which, so the two reconcile.
"""

from __future__ import annotations

from PySide6 import QtWidgets

from viewer.analysis.kernels import parts_note
from viewer.analysis.units import counted, duration, group
from viewer.ui.panels.common import FormGrid, ScopedPanel, fmt_pct, note_label, scope_text

BREAKDOWN = (("ntt_msm_h", "ntt_msm_h"), ("batch_add", "batch_add"), ("tail_msm", "tail_msm"))


class KernelPanel(ScopedPanel):
    """Kernel total, mean, breakdown, per GPU / worker, and kernel vs GPU-call vs synthesis."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)  # ScopedPanel: a frameless scroll area and its scope line
        self.form = FormGrid()
        f = self.form
        f.add_row("source", "Source")
        f.add_row("total", "Kernel time", bold=True)
        f.add_row("mean", "Mean per partition", bold=True)
        f.add_row("partitions", "Partitions")
        self.breakdown_title = f.add_section("Breakdown")
        for key, caption in BREAKDOWN:
            f.add_row(key, caption)
        f.add_section("Where the time went")
        f.add_row("kernel_vs", "CUDA kernels")
        f.add_row("gpu_call", "GPU calls (GPU_START→END)")
        f.add_row("kernel_share", "Kernels' share of the GPU calls")
        f.add_row("synth", "CPU synthesis")
        self.per_gpu_title = f.add_section("Per GPU")
        self.per_gpu = QtWidgets.QLabel()
        self.per_worker = QtWidgets.QLabel()
        for label in (self.per_gpu, self.per_worker):
            label.setTextInteractionFlags(label.textInteractionFlags().TextSelectableByMouse)
            label.setWordWrap(True)
            label.setContentsMargins(8, 0, 8, 0)
        f.add_widget(self.per_gpu)
        self.per_worker_title = f.add_section("Per worker")
        f.add_widget(self.per_worker)
        self.note = note_label()
        container = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(container)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.scope)
        layout.addWidget(f)
        layout.addWidget(self.note)
        layout.addStretch(1)
        self.setWidget(container)

    def clear(self) -> None:
        for label in self.form.values.values():
            label.setText("—")
        for label in (self.per_gpu, self.per_worker, self.scope, self.note):
            label.setText("")

    def set_summary(self, summary) -> None:
        k = summary.kernel
        f = self.form
        in_range = summary.rng is not None
        clipped = " (clipped to the range)" if in_range else ""
        upper = k.source == "gpu_ms"
        self._summary = summary
        self.scope.setText(scope_text(summary, self._clock))
        f.set(
            "source",
            "gpu_ms (upper bound: no CUZK_TIMING)" if upper else "cuzk_timing (CUDA kernels)",
        )
        total = "Kernel time in the range, clipped" if in_range else "Kernel time, whole session"
        f.set("total", duration(k.total_ms), total)
        f.set(
            "mean",
            duration(k.mean_ms),
            "Mean per partition (whole kernels)" if in_range else "Mean per partition",
        )
        f.set(
            "partitions",
            group(f"{k.partitions:,}"),
            "Partitions touching the range" if in_range else "Partitions",
        )
        for key, caption in BREAKDOWN:
            part = k.breakdown_ms.get(key, 0.0) if k.breakdown_ms else 0.0
            share = part / k.total_ms if k.total_ms else None
            f.set(key, f"{duration(part)}  ({fmt_pct(share, 0)})" if not upper else "—", caption)
        f.set("kernel_vs", duration(k.total_ms), "CUDA kernels" + clipped)
        f.set("gpu_call", duration(k.gpu_call_ms), "GPU calls (GPU_START→END)" + clipped)
        share = k.total_ms / k.gpu_call_ms if k.gpu_call_ms else None
        f.set("kernel_share", fmt_pct(share, 0))
        f.set("synth", duration(k.synth_ms), "CPU synthesis" + clipped)
        for title, text in (
            (self.breakdown_title, "Breakdown"),
            (self.per_gpu_title, "Per GPU"),
            (self.per_worker_title, "Per worker"),
        ):
            title.setText(text + clipped)
        self.per_gpu.setText(
            "\n".join(f"GPU {g}: {duration(ms)}" for g, ms in sorted(k.per_gpu.items())) or "—"
        )
        self.per_worker.setText(
            "\n".join(f"worker {w}: {duration(ms)}" for w, ms in sorted(k.per_worker.items()))
            or "—"
        )
        notes = []
        if in_range:
            parts = counted(k.partitions, "partition", grouped=True)
            notes.append(
                "Totals count the part of each kernel inside the range; the mean is over the "
                f"whole kernels of the {parts} touching it, so total / partitions need not "
                "equal it."
            )
        if parts_note(k):
            notes.append(parts_note(k))
        if k.unattributed_ms > 0:
            notes.append(
                f"The total includes {duration(k.unattributed_ms)} of CUZK_TIMING blocks no "
                "GPU call took (not in the per-GPU and per-worker figures)."
            )
        self.note.setText("\n".join(notes))
        self.note.setVisible(bool(notes))
