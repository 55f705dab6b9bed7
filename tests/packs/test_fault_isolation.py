"""Fault isolation: a broken pack is recorded with its identity and error; others keep working."""

from __future__ import annotations

import logging
import os
import signal
import time
import types
from collections.abc import Callable
from typing import Any

import pytest

from toolpacks import Host, PackError, Toolbox, hookimpl, tool
from toolpacks.testing import call


def _raising_pack(exc: BaseException) -> types.ModuleType:
    module = types.ModuleType("raising_pack")

    def register_tools(register: Any) -> None:
        raise exc

    module.register_tools = hookimpl(register_tools)  # type: ignore[attr-defined]
    return module


def test_import_error_fails_only_that_pack(site: Any, ping_source: str) -> None:
    """A pack that raises at import is failed with name, distribution, version and error."""
    site.pack("broken", "raise ImportError('missing dependency: libfoo')\n", version="0.9")
    site.pack("ping", ping_source)
    host = site.host()
    ts = host.toolset()
    assert ts.names() == ["ping"]
    info = host.pack("broken")
    assert (info.name, info.distribution, info.version, info.status) == (
        "broken",
        "toolpacks-broken",
        "0.9",
        "failed",
    )
    assert info.error == "ImportError: missing dependency: libfoo"
    assert call(ts, "ping").value == "pong localhost"


def test_syntax_error_in_pack_module_is_isolated(site: Any, ping_source: str) -> None:
    """A pack whose module does not even parse is failed, not fatal."""
    site.pack("bad", "def oops(:\n")
    site.pack("ping", ping_source)
    host = site.host()
    assert host.toolset().names() == ["ping"]
    assert host.pack("bad").error is not None
    assert host.pack("bad").error.startswith("SyntaxError")  # type: ignore[union-attr]


def test_missing_module_is_isolated(site: Any, ping_source: str) -> None:
    """An entry point naming a module that does not exist fails that pack only."""
    site.dist("toolpacks-ghost", "1.0", ghost="no_such_module_anywhere")
    site.pack("ping", ping_source)
    host = site.host()
    assert host.toolset().names() == ["ping"]
    assert "ModuleNotFoundError" in (host.pack("ghost").error or "")


def test_register_tools_raising_fails_the_pack(
    pack_of: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    """An exception in register_tools is recorded (and logged); other packs work."""
    host = Host({}, discover=False)
    host.add_pack(_raising_pack(RuntimeError("no config")), "bad")
    host.add_pack(pack_of(_ok), "good")
    with caplog.at_level(logging.WARNING, logger="toolpacks"):
        ts = host.toolset()
    assert ts.names() == ["ok"]
    info = host.pack("bad")
    assert info.status == "failed"
    assert info.error == "RuntimeError: no config"
    assert "pack 'bad' (in-process) failed to load" in caplog.text


def test_system_exit_in_register_tools_is_contained(pack_of: Callable[..., Any]) -> None:
    """Even SystemExit from a pack is recorded as a failure, not an exit."""
    host = Host({}, discover=False)
    host.add_pack(_raising_pack(SystemExit(3)), "quitter")
    host.add_pack(pack_of(_ok), "good")
    assert host.toolset().names() == ["ok"]
    assert host.pack("quitter").error == "SystemExit: 3"


def test_keyboard_interrupt_raised_by_a_pack_fails_only_that_pack() -> None:
    """A ``KeyboardInterrupt`` the pack's own code raises is a failure like any other."""
    host = Host({}, discover=False)
    host.add_pack(_raising_pack(KeyboardInterrupt("no signal")), "ctrl_c")
    host.add_pack(_raising_pack(_Custom("custom")), "custom")
    ts = host.toolset()
    assert len(ts) == 0
    assert host.pack("ctrl_c").status == "failed"
    assert "KeyboardInterrupt" in (host.pack("ctrl_c").error or "")
    assert host.pack("custom").error == "_Custom: custom"


class _Custom(BaseException):
    """A BaseException subclass that is neither Exception nor a signal."""


def test_a_real_ctrl_c_while_loading_still_stops() -> None:
    """A SIGINT that arrives while a pack loads propagates as ``KeyboardInterrupt``."""
    module = types.ModuleType("interrupted_pack")

    def register_tools(register: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the handler raises here, in the main thread

    module.register_tools = hookimpl(register_tools)  # type: ignore[attr-defined]
    host = Host({}, discover=False)
    host.add_pack(module, "interrupted")
    # Python's own handler, as in an interactive program: a run started in the background
    # (``nohup``, ``cmd &``) inherits SIGINT ignored, where no Ctrl-C can arrive at all.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            host.toolset()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


@tool
def _ok() -> str:
    """Answer ok."""
    return "ok"


_ok = _ok.replace(name="ok")


@pytest.mark.parametrize(
    ("item", "error"),
    [
        (42, "TypeError: pack 'bad' registered int 42"),
        (Toolbox, "ToolDefinitionError: pack 'bad' registered the class Toolbox"),
        (lambda x: x, "ToolDefinitionError"),
    ],
    ids=["not-a-tool", "class", "untyped-function"],
)
def test_invalid_registration_fails_the_pack(
    pack_of: Callable[..., Any], item: Any, error: str
) -> None:
    """Registering something that is not a tool fails that pack with a clear error."""
    host = Host({}, discover=False)
    host.add_pack(pack_of(item), "bad")
    host.add_pack(pack_of(_ok), "good")
    assert host.toolset().names() == ["ok"]
    info = host.pack("bad")
    assert info.status == "failed"
    assert info.error is not None
    assert info.error.startswith(error)


def test_duplicate_tool_in_one_pack_fails_it(pack_of: Callable[..., Any]) -> None:
    """A pack registering two tools of the same name is failed, naming the tool."""
    host = Host({}, discover=False)
    host.add_pack(pack_of(_ok, _ok), "twice")
    host.toolset()
    assert "registered two tools named 'ok'" in (host.pack("twice").error or "")


def test_misspelled_hook_fails_the_pack() -> None:
    """A pack implementing a hook toolpacks does not define is failed with the known hooks."""
    module = types.ModuleType("typo_pack")

    def register_tool(register: Any) -> None:
        register(_ok)

    module.register_tool = hookimpl(register_tool)  # type: ignore[attr-defined]
    host = Host({}, discover=False)
    host.add_pack(module, "typo")
    host.toolset()
    error = host.pack("typo").error or ""
    assert "unknown hook(s) register_tool" in error
    assert "register_tools" in error


def test_hook_with_wrong_argument_fails_the_pack() -> None:
    """Pluggy's signature check (an argument the spec lacks) fails the pack, not the host."""
    module = types.ModuleType("wrong_args")

    def register_tools(register: Any, extra: Any) -> None:
        register(_ok)

    module.register_tools = hookimpl(register_tools)  # type: ignore[attr-defined]
    host = Host({}, discover=False)
    host.add_pack(module, "wrong")
    assert host.toolset().names() == []
    assert "extra" in (host.pack("wrong").error or "")


def test_failed_pack_is_loaded_once() -> None:
    """A failing pack is not retried on every toolset build."""
    attempts: list[int] = []
    module = types.ModuleType("flaky")

    def register_tools(register: Any) -> None:
        attempts.append(1)
        raise RuntimeError("down")

    module.register_tools = hookimpl(register_tools)  # type: ignore[attr-defined]
    host = Host({}, discover=False)
    host.add_pack(module, "flaky")
    host.toolset()
    host.toolset()
    assert attempts == [1]


def test_explicitly_requested_failed_pack_fails_the_toolset(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A pack asked for by name must load; its failure is logged once, with the cause."""
    host = Host({}, discover=False)
    host.add_pack(_raising_pack(RuntimeError("down")), "bad")
    with caplog.at_level(logging.WARNING, logger="toolpacks"), pytest.raises(PackError):
        host.toolset(packs=["bad"])
    assert caplog.text.count("RuntimeError: down") == 1


def test_toolbox_registration_with_options_is_refused(pack_of: Callable[..., Any]) -> None:
    """A Toolbox takes only alias=; other options would be silently lost, so they fail."""

    class Box(Toolbox):
        def ping(self) -> str:
            """Answer."""
            return "pong"

    module = types.ModuleType("box_pack")

    def register_tools(register: Any) -> None:
        register(Box(), tags=["x"])

    module.register_tools = hookimpl(register_tools)  # type: ignore[attr-defined]
    host = Host({}, discover=False)
    host.add_pack(module, "box")
    host.toolset()
    assert "takes only alias=" in (host.pack("box").error or "")
