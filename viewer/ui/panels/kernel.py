"""Kernel-time panel: true CUDA kernel time in the selected range, and where it went."""

from __future__ import annotations

from PySide6 import QtWidgets

from viewer.ui.panels.common import FormGrid, fmt_ms, fmt_pct

BREAKDOWN = (("ntt_msm_h", "ntt_msm_h"), ("batch_add", "batch_add"), ("tail_msm", "tail_msm"))


class KernelPanel(QtWidgets.QScrollArea):
    """Kernel total, mean, breakdown, per GPU / worker, and kernel vs GPU-call vs synthesis."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.form = FormGrid()
        f = self.form
        f.add_row("source", "Source")
        f.add_row("total", "Kernel time (total)", bold=True)
        f.add_row("mean", "Mean per partition", bold=True)
        f.add_row("partitions", "Partitions")
        f.add_section("Breakdown")
        for key, caption in BREAKDOWN:
            f.add_row(key, caption)
        f.add_section("Where the time went")
        f.add_row("kernel_vs", "CUDA kernels")
        f.add_row("gpu_call", "GPU calls (GPU_START→END)")
        f.add_row("synth", "CPU synthesis")
        f.add_section("Per GPU")
        self.per_gpu = QtWidgets.QLabel()
        self.per_worker = QtWidgets.QLabel()
        for label in (self.per_gpu, self.per_worker):
            label.setTextInteractionFlags(label.textInteractionFlags().TextSelectableByMouse)
            label.setWordWrap(True)
            label.setContentsMargins(8, 0, 8, 0)
        f.add_widget(self.per_gpu)
        f.add_section("Per worker")
        f.add_widget(self.per_worker)
        container = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(container)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(f)
        layout.addStretch(1)
        self.setWidget(container)

    def clear(self) -> None:
        for label in self.form.values.values():
            label.setText("—")
        self.per_gpu.setText("")
        self.per_worker.setText("")

    def set_summary(self, summary) -> None:
        k = summary.kernel
        f = self.form
        upper = k.source == "gpu_ms"
        f.set(
            "source",
            "gpu_ms (upper bound: no CUZK_TIMING)" if upper else "cuzk_timing (CUDA kernels)",
        )
        f.set("total", fmt_ms(k.total_ms))
        f.set("mean", fmt_ms(k.mean_ms))
        f.set("partitions", f"{k.partitions:,}".replace(",", " "))
        for key, _ in BREAKDOWN:
            part = k.breakdown_ms.get(key, 0.0) if k.breakdown_ms else 0.0
            share = part / k.total_ms if k.total_ms else None
            f.set(key, f"{fmt_ms(part)}  ({fmt_pct(share, 0)})" if not upper else "—")
        f.set("kernel_vs", fmt_ms(k.total_ms))
        call_share = k.total_ms / k.gpu_call_ms if k.gpu_call_ms else None
        f.set("gpu_call", f"{fmt_ms(k.gpu_call_ms)}  (kernels {fmt_pct(call_share, 0)})")
        f.set("synth", fmt_ms(k.synth_ms))
        self.per_gpu.setText(
            "\n".join(f"GPU {g}: {fmt_ms(ms)}" for g, ms in sorted(k.per_gpu.items())) or "—"
        )
        self.per_worker.setText(
            "\n".join(f"worker {w}: {fmt_ms(ms)}" for w, ms in sorted(k.per_worker.items())) or "—"
        )
