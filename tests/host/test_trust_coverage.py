"""Trust covers the code that actually runs, not only the files a configuration names.

A server script's sibling modules (its directory is first on its ``sys.path``), a module run
with ``python -m`` from inside the configuration's directory, and the target of a symbolic
link leading outside it: changing any of them withdraws the trust.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from toolpacks import Host
from toolpacks.cli._main import main
from toolpacks.host._trust_scope import covered_files


def _trust(capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["trust"]) == 0
    out, _ = capsys.readouterr()
    return out


def _server_config(args: list[str], env: str = "") -> None:
    quoted = ", ".join(f'"{a}"' for a in args)
    text = f'[mcp_servers.local]\ncommand = "{sys.executable}"\nargs = [{quoted}]\n'
    Path("toolpacks.toml").write_text(text + env, encoding="utf-8")


def test_a_changed_sibling_module_of_a_server_script_needs_trust_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``servers/server.py`` imports ``helper``: helper.py is covered too."""
    Path("servers").mkdir()
    Path("servers/server.py").write_text("import helper\n", "utf-8")
    Path("servers/helper.py").write_text("X = 1\n", "utf-8")
    _server_config(["servers/server.py"])
    out = _trust(capsys)
    assert "servers/helper.py" in out
    assert Host(discover=False).trusted

    Path("servers/helper.py").write_text("X = 2\n", "utf-8")
    assert not Host(discover=False).trusted


def test_a_new_sibling_module_of_a_server_script_needs_trust_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A module added beside the script could shadow one it imports."""
    Path("servers").mkdir()
    Path("servers/server.py").write_text("import json\n", "utf-8")
    _server_config(["servers/server.py"])
    _trust(capsys)
    Path("servers/json.py").write_text("raise SystemExit\n", "utf-8")
    assert not Host(discover=False).trusted


def test_a_changed_package_run_with_dash_m_needs_trust_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``-m localpkg.server`` with ``PYTHONPATH = "src"``: the package's files are covered."""
    package = Path("src/localpkg")
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", "utf-8")
    (package / "server.py").write_text("from localpkg import util\n", "utf-8")
    (package / "util.py").write_text("X = 1\n", "utf-8")
    _server_config(["-m", "localpkg.server"], env='env = { PYTHONPATH = "src" }\n')
    out = _trust(capsys)
    assert "src/localpkg/server.py" in out
    assert "src/localpkg/util.py" in out
    assert Host(discover=False).trusted

    (package / "util.py").write_text("X = 2\n", "utf-8")
    assert not Host(discover=False).trusted


def test_a_changed_module_in_the_configuration_directory_run_with_dash_m_needs_trust_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``-m localserver`` next to the configuration (on ``sys.path`` for older Pythons)."""
    Path("localserver.py").write_text("X = 1\n", "utf-8")
    _server_config(["-m", "localserver"])
    out = _trust(capsys)
    assert "localserver.py" in out
    Path("localserver.py").write_text("X = 2\n", "utf-8")
    assert not Host(discover=False).trusted


def test_a_changed_symlink_target_outside_the_directory_needs_trust_again(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A script that is a link to a file elsewhere: the file it leads to is covered."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "real_server.py").write_text("X = 1\n", "utf-8")
    os.symlink(elsewhere / "real_server.py", "server.py")
    _server_config(["server.py"])
    out = _trust(capsys)
    assert "real_server.py" in out
    assert Host(discover=False).trusted

    (elsewhere / "real_server.py").write_text("X = 2\n", "utf-8")
    assert not Host(discover=False).trusted


def test_programs_outside_the_directory_are_not_covered() -> None:
    """The interpreter and installed modules are what the user installed: not fingerprinted."""
    _server_config(["-m", "mcp_server_time"])
    host = Host(discover=False)
    base = Path.cwd().resolve()
    assert all(path.is_relative_to(base) for path in covered_files(host.config))
