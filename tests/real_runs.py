"""The real runs of a cuzk-shaped pipeline recorded on GPU hosts (``realpipe.py``), as the
tests read them: ``../shared/real_h200`` copied into the tests' data (80 KB), so that a
clean clone runs every test that reads them, and the later hosts' sessions."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "whatif" / "data"
#: Six runs of one H200 host (``../shared/real_h200``, its README beside them).
REAL = DATA / "h200_shared"
