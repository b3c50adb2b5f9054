"""cuzk Timeline Viewer: read, analyse and draw cuzk TIMELINE proving logs."""

__version__ = "0.1.0"
