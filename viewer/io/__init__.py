"""Read cuzk daemon logs (plain, .gz, .zst) into a ``viewer.model.Timeline``. No Qt here."""

from __future__ import annotations

from viewer.io.errors import LoadCancelled, LogError
from viewer.io.reader import open_log

__all__ = ["LoadCancelled", "LogError", "open_log"]
