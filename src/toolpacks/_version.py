"""The version of toolpacks (read by the build backend and by ``toolpacks --version``)."""

__version__ = "0.1.0"
