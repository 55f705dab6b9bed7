"""The small media the pack returns: a 1x1 red PNG and a short silent WAV."""

from __future__ import annotations

import base64

__all__ = ["PNG", "WAV"]

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)
"""A 1x1 red pixel, as PNG."""
WAV = base64.b64decode("UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==")
"""Eight samples of 8-bit mono silence at 8 kHz, as WAV."""
