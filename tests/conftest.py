"""Suite-wide settings."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# CI runs the same examples every time (a property failure there must be reproducible,
# and must not depend on luck); a developer's run explores new ones.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True, scope="session")
def _own_user_data(tmp_path_factory: pytest.TempPathFactory):
    """Notes a test saves for a bundled sample go to the per-user folder: a temporary
    one, never the developer's ``~/.local/share``."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg")))
        yield
