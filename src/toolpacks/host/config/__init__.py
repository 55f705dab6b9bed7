"""The host's configuration: the schema of ``toolpacks.toml`` and how it is found and read."""
