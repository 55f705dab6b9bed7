"""The ``toolpacks`` command line (the top layer: it may use every other)."""

from toolpacks.cli._main import main

__all__ = ["main"]
