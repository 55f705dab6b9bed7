"""Isolated packs' environments made with uv: what a pack's build code sees, installs.

Each test builds a real environment (uv, a local distribution); they share nothing with the
host's environment but what they say.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from toolpacks.packs.isolated._env import ensure_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SPY_BACKEND = """
import json, os
from pathlib import Path
from typing import Any
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


CLOCK = """
from toolpacks import hookimpl, tool

@tool
def tick() -> str:
    '''Say tick.'''
    return "tick"

@hookimpl
def register_tools(register):
    register(tick)
"""

BROKEN = """
import not_a_module_anywhere_xyz
"""


def test_install_isolated_keeps_a_trusted_configuration_trusted_and_writes_a_relative_path(
    pack_writer: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """install-then-call with no second ``trust``; the requirement is written relative."""
    from toolpacks.cli._main import main
    from toolpacks.host.config._load import load_config, untrusted_keys

    source = pack_writer("toolpacks-hardtick", "hardtick", "hardtick_pack", CLOCK)
    config = Path("toolpacks.toml")  # found implicitly: it needs trust
    config.write_text("# mine\n[settings]\nmax_concurrency = 4\n", encoding="utf-8")
    assert main(["trust"]) == 0
    assert main(["install", str(source), "--isolated", "--agent", "dev"]) == 0
    out = capsys.readouterr().out
    assert "stays trusted" in out
    text = config.read_text(encoding="utf-8")
    assert text.startswith("# mine\n")
    relative = os.path.relpath(source, Path.cwd())
    assert f'requirement = "{relative}"' in text, text
    assert not Path(relative).is_absolute()
    assert untrusted_keys(load_config(config).raw)  # it does hold keys that need trust
    assert main(["call", "tick", "--agent", "dev"]) == 0
    assert "tick" in capsys.readouterr().out


def test_install_isolated_of_an_untrusted_configuration_leaves_it_untrusted(
    pack_writer: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command never grants trust the file did not have."""
    from toolpacks.cli._main import main
    from toolpacks.host._trust_scope import config_fingerprint
    from toolpacks.host.config._load import load_config
    from toolpacks.packs._trust import is_trusted

    source = pack_writer("toolpacks-hardtick", "hardtick", "hardtick_pack", CLOCK)
    config = Path("toolpacks.toml")
    config.write_text("[settings]\nmax_concurrency = 4\n", encoding="utf-8")
    assert main(["install", str(source), "--isolated", "--agent", "dev"]) == 0
    assert "stays trusted" not in capsys.readouterr().out
    assert not is_trusted(config, config_fingerprint(load_config(config)))


def test_install_isolated_of_a_pack_that_cannot_import_is_refused(
    pack_writer: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The import error at install time, and the configuration left as it was."""
    from toolpacks.cli._main import main

    source = pack_writer("toolpacks-hardbroken", "hardbroken", "hardbroken_pack", BROKEN)
    config = Path("toolpacks.toml")
    config.write_text("[settings]\nmax_concurrency = 4\n", encoding="utf-8")
    assert main(["install", str(source), "--isolated", "--agent", "dev"]) != 0
    err = capsys.readouterr().err
    assert "cannot be imported" in err, err
    assert "not_a_module_anywhere_xyz" in err
    assert config.read_text(encoding="utf-8") == "[settings]\nmax_concurrency = 4\n"
