from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from table import ROWS, render  # noqa: E402


def pytest_sessionfinish(session, exitstatus):
    if ROWS:
        print("\n\n" + render(ROWS))
