"""Exceptions of the log reader."""

from __future__ import annotations


class LogError(Exception):
    """The file is not a readable cuzk log; the message names the file and the problem."""


class LoadCancelled(Exception):
    """The caller's ``cancel()`` returned True while the log was being read."""
