"""Deferred loading in the configuration: ``defer`` globs, bare packs, tags, ``auto``.

Deferred tools stay in the toolset (callable by name); they are only marked, so that what is
sent up front leaves them out.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import pytest

from toolpacks import ConfigError, Host, tool


@tool(tags=["slow"])
def crawl(url: str) -> str:
    """Crawl a site."""
    return f"crawled:{url}"


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"read:{path}"


@tool
def read_dir(path: str) -> str:
    """List a directory."""
    return f"dir:{path}"


@tool
def write_file(path: str, text: str) -> str:
    """Write a file."""
    return f"wrote:{path}"


@tool
def now() -> str:
    """The time."""
    return "noon"


def _host(pack_of: Callable[..., types.ModuleType], agent: dict[str, Any]) -> Host:
    host = Host({"agents": {"a": agent}}, discover=False)
    host.add_pack(pack_of(crawl), "web")
    host.add_pack(pack_of(read_file, read_dir, write_file), "files")
    host.add_pack(pack_of(now), "clock")
    return host


def _deferred(pack_of: Callable[..., types.ModuleType], **agent: Any) -> frozenset[str]:
    with _host(pack_of, agent) as host:
        return host.toolset("a").deferred


def test_nothing_is_deferred_by_default(pack_of: Callable[..., types.ModuleType]) -> None:
    assert _deferred(pack_of) == frozenset()


def test_a_bare_pack_name_defers_the_whole_pack(pack_of: Callable[..., types.ModuleType]) -> None:
    assert _deferred(pack_of, defer=["files"]) == {"read_file", "read_dir", "write_file"}


def test_globs_match_qualified_and_exposed_names(pack_of: Callable[..., types.ModuleType]) -> None:
    assert _deferred(pack_of, defer=["files.read_*"]) == {"read_file", "read_dir"}
    assert _deferred(pack_of, defer=["write_*"]) == {"write_file"}


def test_a_tag_defers_the_tools_carrying_it(pack_of: Callable[..., types.ModuleType]) -> None:
    assert _deferred(pack_of, defer=["tag:slow"]) == {"crawl"}


def test_auto_defers_everything_past_the_threshold(
    pack_of: Callable[..., types.ModuleType],
) -> None:
    assert _deferred(pack_of, defer="auto") == frozenset()  # 5 tools, threshold 30
    everything = {"crawl", "read_file", "read_dir", "write_file", "now"}
    assert _deferred(pack_of, defer="auto", defer_threshold=4) == everything
    assert _deferred(pack_of, defer="auto", defer_threshold=5) == frozenset()


def test_never_defer_wins(pack_of: Callable[..., types.ModuleType]) -> None:
    kept = _deferred(
        pack_of, defer="auto", defer_threshold=1, never_defer=["clock", "files.read_file"]
    )
    assert kept == {"crawl", "read_dir", "write_file"}
    assert _deferred(pack_of, defer=["files"], never_defer=["read_*"]) == {"write_file"}


@pytest.mark.parametrize(
    ("pattern", "hint"),
    [("filez", "'files'"), ("tag:slwo", "'tag:slow'"), ("files.raed_*", None)],
)
def test_a_pattern_matching_nothing_is_a_config_error(
    pack_of: Callable[..., types.ModuleType], pattern: str, hint: str | None
) -> None:
    with pytest.raises(ConfigError, match=r"defer .*matches no tool") as info:
        _deferred(pack_of, defer=[pattern])
    assert pattern in str(info.value)
    if hint:
        assert f"did you mean {hint}" in str(info.value)


def test_never_defer_matching_nothing_is_a_config_error(
    pack_of: Callable[..., types.ModuleType],
) -> None:
    with pytest.raises(ConfigError, match=r"never_defer .*matches no tool"):
        _deferred(pack_of, defer="auto", never_defer=["nope"])


def test_a_bad_defer_value_is_a_config_error(pack_of: Callable[..., types.ModuleType]) -> None:
    with pytest.raises(ConfigError):
        _host(pack_of, {"defer": "everything"})
    with pytest.raises(ConfigError):
        _host(pack_of, {"defer": "auto", "defer_threshold": -1})


def test_deferred_tools_stay_callable(pack_of: Callable[..., types.ModuleType]) -> None:
    with _host(pack_of, {"defer": ["files"]}) as host:
        toolset = host.toolset("a")
        assert "read_file" in toolset.names()
        assert toolset.call_sync("read_file", {"path": "x"}).value == "read:x"


def test_the_keyword_overrides_the_configuration(pack_of: Callable[..., types.ModuleType]) -> None:
    with _host(pack_of, {"defer": ["files"]}) as host:
        assert host.toolset("a", defer=["web"]).deferred == {"crawl"}
        assert host.toolset("a", defer=[]).deferred == frozenset()


def test_definitions_leave_deferred_tools_out(pack_of: Callable[..., types.ModuleType]) -> None:
    with _host(pack_of, {"defer": ["files"]}) as host:
        toolset = host.toolset("a")
        names = [d["name"] for d in toolset.definitions("neutral")]
        assert names == ["crawl", "now", "search_tools"]
        everything = [d["name"] for d in toolset.definitions("neutral", defer=False)]
        assert everything == ["crawl", "now", "read_dir", "read_file", "write_file"]


CLOCK_PACK = """
from toolpacks import hookimpl, tool


@tool
def now() -> str:
    \"\"\"The time.\"\"\"
    return "noon"


@tool
def today() -> str:
    \"\"\"The date.\"\"\"
    return "monday"


@hookimpl
def register_tools(register):
    register(now)
    register(today)
"""


def test_the_cli_shows_what_is_deferred(
    site: Any, capsys: pytest.CaptureFixture[str], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``toolpacks toolset AGENT`` marks deferred tools; ``doctor`` lists them."""
    import json

    from toolpacks.cli._main import main

    site.pack("timekit", CLOCK_PACK)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolpacks.toml").write_text(
        '[agents.a]\npacks = ["timekit"]\ndefer = ["timekit.today"]\n'
    )
    assert main(["toolset", "a"]) == 0
    out = capsys.readouterr().out
    assert "2 tools, 1 deferred" in out
    assert next(line for line in out.splitlines() if "(deferred)" in line).split()[0] == "today"
    assert main(["toolset", "a", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deferred"] == ["today"]
    main(["doctor"])
    assert "1 deferred: today" in capsys.readouterr().out
