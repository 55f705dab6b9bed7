"""``serve --http``'s per-connection limits reach the server from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolpacks.cli._main import main


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "toolpacks.toml"
    path.write_text('[agents.a]\npacks = []\n')
    return path


def test_the_limit_flags_reach_serve_http(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--header-timeout, --body-timeout and --max-connections are passed on as given."""
    seen: dict[str, Any] = {}

    def fake_serve_http(*args: Any, **kwargs: Any) -> int:
        seen.update(kwargs)
        return 0

    from toolpacks.mcp.http import _workers

    monkeypatch.setattr(_workers, "serve_http", fake_serve_http)
    argv = ["--config", str(config), "serve", "--agent", "a", "--http", "0"]
    limits = ["--header-timeout", "2.5", "--body-timeout", "7", "--max-connections", "40"]
    assert main([*argv, *limits]) == 0
    assert (seen["header_timeout"], seen["body_timeout"], seen["max_connections"]) == (2.5, 7, 40)
    seen.clear()
    assert main(argv) == 0
    assert not {"header_timeout", "body_timeout", "max_connections"} & seen.keys()


@pytest.mark.parametrize(
    "flag", ["--header-timeout", "--body-timeout", "--max-connections"]
)
def test_the_limit_flags_are_refused_over_stdio_and_when_not_positive(
    config: Path, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Over stdio they mean nothing; with --http a value of 0 is refused, naming the flag."""
    assert main(["--config", str(config), "serve", "--agent", "a", flag, "3"]) != 0
    assert "apply to --http only" in capsys.readouterr().err
    argv = ["--config", str(config), "serve", "--agent", "a", "--http", "0", flag, "0"]
    assert main(argv) != 0
    assert f"{flag} must be a positive number" in capsys.readouterr().err
