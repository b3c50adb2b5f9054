"""Subcommands of ``python -m viewer``: each module has ``add_parser`` and ``run``."""
