"""Side panels: each shows one part of a ``SessionSummary`` for the selected range."""

from viewer.ui.panels.kernel import KernelPanel
from viewer.ui.panels.tables import GapsPanel, JobsPanel, TransitionsPanel
from viewer.ui.panels.throughput import ThroughputPanel

__all__ = ["GapsPanel", "JobsPanel", "KernelPanel", "ThroughputPanel", "TransitionsPanel"]
