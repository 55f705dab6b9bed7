"""The pack's ``register_tools`` hook, its settings, and two instances in one host."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from toolpacks import Host

import toolpacks_sqlite
from toolpacks_sqlite import SQLiteTools


class FakeRegister:
    """Records what a pack registers; carries the pack's settings like the host's callback."""

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        pack: str = "sqlite",
        config_dir: Path | None = None,
    ) -> None:
        self.config: Mapping[str, Any] = dict(config or {})
        self.pack = pack
        self.config_dir = config_dir
        self.items: list[tuple[Any, dict[str, Any]]] = []

    def __call__(self, item: Any, /, **options: Any) -> None:
        self.items.append((item, options))


def test_register_tools_registers_one_configured_toolbox(shop: Path) -> None:
    """One SQLiteTools on the configured database, exposing the three expected tools."""
    register = FakeRegister({"database": str(shop), "max_rows": 7, "timeout_seconds": 3})
    toolpacks_sqlite.register_tools(register)
    [(item, options)] = register.items
    assert isinstance(item, SQLiteTools)
    assert options == {}
    assert item.database == shop.resolve()
    assert item.max_rows == 7
    assert [t.name for t in item.tools()] == ["list_tables", "describe_table", "query"]


def test_relative_database_is_relative_to_the_configuration_file(
    shop: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A relative database path is resolved against the config file's directory, not cwd."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    register = FakeRegister({"database": "data/shop.db"}, config_dir=shop.parent.parent)
    toolpacks_sqlite.register_tools(register)
    assert register.items[0][0].database == shop.resolve()


def test_relative_database_without_a_configuration_file_is_refused(shop: Path) -> None:
    """Settings from code have no file to be relative to: only an absolute path will do."""
    with pytest.raises(ValueError, match="relative path"):
        toolpacks_sqlite.register_tools(FakeRegister({"database": "data/shop.db"}))


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, r"needs a database file: add database = .* to \[packs.warehouse\]"),
        ({"database": 3}, "needs a database file"),
        ({"database": "x.db", "databse": "y.db"}, r"unknown setting\(s\) databse"),
        ({"database": "/nonexistent/toolpacks.db"}, "does not exist"),
    ],
)
def test_bad_settings_fail_registration(config: dict[str, Any], message: str) -> None:
    """A missing database or a bad table fails loudly, naming the pack's table."""
    with pytest.raises(ValueError, match=message):
        toolpacks_sqlite.register_tools(FakeRegister(config, pack="warehouse"))


def test_two_instances_in_one_host(
    shop: Path, tmp_path: Path, new_database: Callable[[Path, str], Path]
) -> None:
    """An alias table ([packs.warehouse] pack = "sqlite") mounts a second database."""
    other = new_database(tmp_path / "warehouse.db", "CREATE TABLE stock (sku TEXT, qty INT);")
    config = {
        "packs": {
            "sqlite": {"database": str(shop)},
            "warehouse": {"pack": "sqlite", "database": str(other)},
        }
    }
    host = Host(config, discover=False)
    try:
        host.add_pack(toolpacks_sqlite, "sqlite")
        tools = host.tools()
        assert {"sqlite.query", "warehouse.query", "warehouse.list_tables"} <= set(tools)
        shop_tables = asyncio.run(tools["sqlite.list_tables"].invoke({})).value
        warehouse_tables = asyncio.run(tools["warehouse.list_tables"].invoke({})).value
        assert "orders" in [t.name for t in shop_tables]
        assert [t.name for t in warehouse_tables] == ["stock"]
    finally:
        host.close()
