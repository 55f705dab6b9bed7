"""Which packs a toolset holds when a configuration names them twice or disables them (issue 36).

- A pack listed in both ``packs`` and ``optional_packs`` that fails to load: ``optional_packs``
  is the agent saying it can do without, so the toolset builds without it (with the failure
  logged), and calling its tools is an error result.
- A disabled pack is never imported, whether the agent names it or ``"*"`` takes everything,
  and its tools answer no call, by exposed or by qualified name.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

import pytest

BROKEN = """
    from toolpacks import hookimpl

    @hookimpl
    def register_tools(register):
        raise RuntimeError("broken on purpose")
"""


def test_a_failed_pack_in_packs_and_optional_packs_is_done_without(
    site: Any, ping_source: str, caplog: pytest.LogCaptureFixture
) -> None:
    site.pack("ping", ping_source)
    site.pack("broken", BROKEN)
    agent = {"packs": ["ping", "broken"], "optional_packs": ["broken"]}
    host = site.host({"agents": {"a": agent}})
    with caplog.at_level(logging.WARNING, logger="toolpacks"):
        toolset = host.toolset("a")
    assert toolset.names() == ["ping"]
    assert "broken on purpose" in caplog.text


def test_a_failed_pack_only_in_packs_still_fails_the_toolset(site: Any, ping_source: str) -> None:
    """The counterpart: without ``optional_packs`` the same failure stops the toolset."""
    from toolpacks.exceptions import PackError

    site.pack("ping", ping_source)
    site.pack("broken", BROKEN)
    host = site.host({"agents": {"a": {"packs": ["ping", "broken"]}}})
    with pytest.raises(PackError, match="broken on purpose"):
        host.toolset("a")


@pytest.mark.parametrize("packs", [["*"], ["ping", "off"]])
def test_a_disabled_pack_is_not_imported_and_its_tools_answer_no_call(
    site: Any, ping_source: str, packs: list[str]
) -> None:
    site.pack("ping", ping_source)
    hidden = ping_source.replace("def ping", "def hidden").replace("(ping)", "(hidden)")
    module = site.pack("off", hidden)
    host = site.host({"packs": {"disabled": ["off"]}, "agents": {"a": {"packs": packs}}})
    toolset = host.toolset("a")
    assert toolset.names() == ["ping"]
    for name in ("hidden", "off.hidden"):
        result = asyncio.run(toolset.call(name, {}))
        assert result.is_error, name
    assert module not in sys.modules, "the disabled pack was imported"
