"""Isolated packs' environments made with uv: what a pack's build code sees, installs.

Each test builds a real environment (uv, a local distribution); they share nothing with the
host's environment but what they say.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from toolpacks.packs.isolated._env import ensure_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SPY_BACKEND = """
import json, os
from pathlib import Path
Path({out!r}).write_text(json.dumps(dict(os.environ)))
from hatchling.build import *  # noqa: F403 (the real backend does the work)
"""


def _spy_distribution(root: Path, out: Path) -> Path:
    """A distribution whose build backend records the environment it runs in."""
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [build-system]
            requires = ["hatchling"]
            build-backend = "spy_backend"
            backend-path = ["."]

            [project]
            name = "spy-dist"
            version = "1.0"

            [tool.hatch.build.targets.wheel]
            packages = ["spy_dist"]
            """
        ),
        encoding="utf-8",
    )
    (root / "spy_backend.py").write_text(SPY_BACKEND.format(out=str(out)), encoding="utf-8")
    (root / "spy_dist").mkdir()
    (root / "spy_dist" / "__init__.py").write_text("", encoding="utf-8")
    return root


def test_a_packs_build_code_gets_no_host_secret(tmp_path: Path) -> None:
    """The build backend uv runs for a local requirement sees none of the host's variables."""
    out = tmp_path / "build-env.json"
    source = _spy_distribution(tmp_path / "spy", out)
    environ = {**os.environ, "HOST_BUILD_SECRET": "s3cret-of-the-host", "AWS_SECRET_KEY": "k"}
    env = ensure_env(str(source), tmp_path, environ)
    assert env.ready
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert "HOST_BUILD_SECRET" not in seen
    assert "AWS_SECRET_KEY" not in seen
    assert "s3cret-of-the-host" not in seen.values()
