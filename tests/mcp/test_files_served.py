"""The files pack served over stdio: a model's hostile glob pattern cannot freeze the server.

The pattern used to become a backtracking regular expression that held the GIL for minutes,
so the whole ``toolpacks serve`` process stopped answering (SIGTERM included). Served, the
hostile call must come back and the next call must answer.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import BlockingClient, serve_params, text_of

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

HOSTILE = "*a" * 15 + "*b"
"""Minutes per long name for the old regular expressions; one step per character now."""


@pytest.fixture
def served_files(tmp_path: Path) -> Iterator[BlockingClient]:
    root = tmp_path / "root"
    (root / "deep").mkdir(parents=True)
    for i in range(20):
        (root / f"{'a' * 240}{i:010d}").write_text("a\n")
        (root / "deep" / f"{'a' * 240}{i:010d}").write_text("a\n")
    config = tmp_path / "toolpacks.toml"
    config.write_text(f'[packs.files]\nroot = "{root}"\n\n[agents.a]\npacks = ["files"]\n')
    params = serve_params(tmp_path, config, "a")
    extra = os.environ.get("TOOLPACKS_TEST_FILES_SRC")  # to run the test on another version
    if extra:
        params.env = {**(params.env or {}), "PYTHONPATH": f"{extra}:{tmp_path}"}
    client = BlockingClient(params, tmp_path / "stderr.log")
    client.connect()
    yield client
    client.close()


def test_a_hostile_pattern_is_answered_and_the_server_goes_on(
    served_files: BlockingClient,
) -> None:
    """find_files with a backtracking-prone pattern answers; list_dir answers after it."""
    result = served_files.call("find_files", {"pattern": HOSTILE})
    assert result.is_error is False, text_of(result)
    listing = served_files.call("list_dir", {"path": "."})
    assert listing.is_error is False, text_of(listing)
    assert "deep" in text_of(listing)
