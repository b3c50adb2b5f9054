"""Side panels and their background runners: each shows one part of a ``SessionSummary`` or a
what-if answer for the selected range. They are given the view and the windows they talk to;
they import neither."""

from viewer.ui.panels.kernel import KernelPanel
from viewer.ui.panels.tables import GapsPanel, JobsPanel, TransitionsPanel
from viewer.ui.panels.throughput import ThroughputPanel

__all__ = ["GapsPanel", "JobsPanel", "KernelPanel", "ThroughputPanel", "TransitionsPanel"]
