"""The pack's ``register_tools`` hook and its ``weekday`` file tool."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from toolpacks import Host, Tool, ToolError

import toolpacks_clock

WEEKDAY_DIR = toolpacks_clock.TOOLS_DIR / "weekday"


class FakeRegister:
    """Records what a pack registers; carries the pack's settings like the host's callback."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.config: Mapping[str, Any] = dict(config or {})
        self.items: list[Any] = []

    def __call__(self, item: Any, /, **options: Any) -> None:
        self.items.append(item)


def test_register_tools_registers_code_tools_and_tools_dir() -> None:
    """Four code tools, then the tools directory holding weekday/TOOL.md and handler.py."""
    register = FakeRegister()
    toolpacks_clock.register_tools(register)
    *tools, directory = register.items
    assert all(isinstance(t, Tool) for t in tools)
    assert [t.name for t in tools] == ["now", "convert_time", "add_duration", "days_between"]
    assert directory == Path(toolpacks_clock.__file__).parent / "tools"
    assert (directory / "weekday" / "TOOL.md").is_file()
    assert (directory / "weekday" / "handler.py").is_file()


def test_alias_key_is_accepted_and_unknown_settings_are_not() -> None:
    """The host's 'pack' key is fine; any other setting is a typo and fails loudly."""
    toolpacks_clock.register_tools(FakeRegister({"pack": "clock"}))
    with pytest.raises(ValueError, match="takes no settings"):
        toolpacks_clock.register_tools(FakeRegister({"timezone": "UTC"}))


def test_tool_md_front_matter() -> None:
    """TOOL.md names the tool, describes it, and declares a required string 'date'."""
    text = (WEEKDAY_DIR / "TOOL.md").read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    meta = yaml.safe_load(front)
    assert meta["name"] == "weekday"
    assert "day of the week" in meta["description"]
    assert meta["parameters"] == {
        "date": {
            "type": "string",
            "description": "The date, as YYYY-MM-DD (for example 2025-03-01).",
            "required": True,
        }
    }
    assert meta["tags"] == ["time", "read"]
    assert body.strip()


def _handler() -> Callable[[dict[str, Any], Any], str]:
    spec = importlib.util.spec_from_file_location("weekday_handler", WEEKDAY_DIR / "handler.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    handle: Callable[[dict[str, Any], Any], str] = module.handle
    return handle


def test_weekday_handler_directly() -> None:
    """handle() returns the English weekday name and refuses a bad date with a ToolError."""
    handle = _handler()
    assert handle({"date": "2024-07-14"}, None) == "Sunday"
    assert handle({"date": "2025-03-01"}, None) == "Saturday"
    with pytest.raises(ToolError, match="use YYYY-MM-DD"):
        handle({"date": "14/07/2024"}, None)


def test_weekday_file_tool_through_a_host() -> None:
    """A host loads the pack's tools directory: clock.weekday validates and answers."""
    host = Host({}, discover=False)
    try:
        host.add_pack(toolpacks_clock, "clock")
        tools = host.tools(["clock"])
        assert list(tools) == [
            "clock.now",
            "clock.convert_time",
            "clock.add_duration",
            "clock.days_between",
            "clock.weekday",
        ]
        weekday = tools["clock.weekday"]
        assert weekday.tags == {"time", "read"}
        assert weekday.hints.read_only is True
        assert weekday.hints.idempotent is True
        assert weekday.input_schema["required"] == ["date"]
        assert asyncio.run(weekday.invoke({"date": "2024-07-14"})).value == "Sunday"
        bad = asyncio.run(weekday.invoke({"date": "not a date"}))
        assert bad.is_error
        assert "use YYYY-MM-DD" in bad.content
        missing = asyncio.run(weekday.invoke({}))
        assert missing.is_error
        assert missing.error is not None
        assert missing.error.kind == "invalid_arguments"
    finally:
        host.close()
