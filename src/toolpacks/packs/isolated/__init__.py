"""Isolated packs: a pack in a child process, in the host's environment or one of its own."""

from __future__ import annotations
