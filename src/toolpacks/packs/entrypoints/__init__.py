"""Packs from installed distributions: entry point group ``toolpacks``.

Discovery from distribution metadata without importing a pack, loading a pack through pluggy
with its failures recorded, manifests (a pack's tools listed without importing it) and the
pins of the lock file.
"""
