"""Suite-wide settings."""

from __future__ import annotations

import os

from hypothesis import settings

# CI runs the same examples every time (a property failure there must be reproducible,
# and must not depend on luck); a developer's run explores new ones.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
