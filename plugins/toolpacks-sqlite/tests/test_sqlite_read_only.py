"""Writes are refused by SQLite itself, whatever the SQL looks like."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from toolpacks import Tool, ToolResult

from toolpacks_sqlite import SQLiteTools
from toolpacks_sqlite._guard import connect_read_only


def run(tool: Tool, arguments: dict[str, Any]) -> ToolResult:
    """Invoke a tool the way a host would, synchronously."""
    return asyncio.run(tool.invoke(arguments))


def fingerprint(database: Path) -> tuple[str, list[str]]:
    """The database file's hash and the names of the files in its directory."""
    digest = hashlib.sha256(database.read_bytes()).hexdigest()
    return digest, sorted(p.name for p in database.parent.iterdir())


WRITES = {
    "delete": ("DELETE FROM orders", "DELETE on 'orders'"),
    "insert": ("INSERT INTO orders (id) VALUES (9)", "INSERT on 'orders'"),
    "update": ("UPDATE customers SET name = 'Eve'", "UPDATE on 'customers'"),
    "replace": ("REPLACE INTO customers (id, name) VALUES (1, 'Eve')", "INSERT on 'customers'"),
    "cte_delete": ("WITH x AS (SELECT 1) DELETE FROM orders", "DELETE on 'orders'"),
    "drop": ("DROP TABLE orders", "a schema change"),
    "drop_view": ("DROP VIEW big_orders", "a schema change"),
    "create": ("CREATE TABLE evil (x)", "a schema change"),
    "create_temp": ("CREATE TEMP TABLE scratch (x)", "a schema change"),
    "create_trigger": (
        "CREATE TEMP TRIGGER t AFTER INSERT ON orders BEGIN SELECT 1; END",
        "CREATE TEMP TRIGGER 't'",
    ),
    "alter": ("ALTER TABLE orders ADD COLUMN y", "ALTER TABLE"),
    "attach": ("ATTACH DATABASE 'other.db' AS other", "ATTACH 'other.db'"),
    "attach_memory": ("ATTACH ':memory:' AS scratch", "ATTACH"),
    "vacuum_into": ("VACUUM INTO 'copy.db'", "ATTACH 'copy.db'"),
    "writable_schema": ("PRAGMA writable_schema = ON", "PRAGMA writable_schema = ON"),
    "query_only_off": ("PRAGMA query_only = OFF", "PRAGMA query_only = OFF"),
    "journal_mode": ("PRAGMA journal_mode = DELETE", "PRAGMA journal_mode"),
    "begin": ("BEGIN IMMEDIATE", "TRANSACTION"),
    "savepoint": ("SAVEPOINT s", "SAVEPOINT"),
    "analyze": ("ANALYZE", "ANALYZE"),
    "load_extension": ("SELECT load_extension('evil')", "the function load_extension()"),
}


@pytest.mark.parametrize(("sql", "denied"), list(WRITES.values()), ids=list(WRITES))
def test_write_is_refused_and_nothing_changes(
    tools: dict[str, Tool], shop: Path, sql: str, denied: str
) -> None:
    """The statement is refused, the error names what was denied, and no file changes."""
    before = fingerprint(shop)
    result = run(tools["query"], {"sql": sql})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert result.content.startswith("Tool 'query' failed: refused (")
    assert denied in result.content
    assert "read-only" in result.content
    assert fingerprint(shop) == before


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1; DELETE FROM orders",
        "SELECT * FROM orders; DROP TABLE orders;",
        "DELETE FROM orders; SELECT 1",
    ],
)
def test_multiple_statements_are_refused(tools: dict[str, Tool], shop: Path, sql: str) -> None:
    """Text holding several statements is refused before any of them runs."""
    before = fingerprint(shop)
    result = run(tools["query"], {"sql": sql})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    # A leading write is refused while it compiles; otherwise the second statement is.
    assert "exactly one SQL statement" in result.content or "refused (DELETE" in result.content
    assert fingerprint(shop) == before


def test_trailing_semicolon_and_comment_are_one_statement(tools: dict[str, Tool]) -> None:
    """A single statement ending in ';' or a comment still runs."""
    result = run(tools["query"], {"sql": "SELECT count(*) AS n FROM orders; -- how many"})
    assert result.value.rows == [{"n": 3}]


def test_read_only_holds_without_the_authorizer(shop: Path) -> None:
    """mode=ro and query_only refuse a write even if the authorizer were removed."""
    connection, _ = connect_read_only(shop)
    with closing(connection):
        connection.set_authorizer(None)
        with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only|query_only"):
            connection.execute("DELETE FROM orders")
        with pytest.raises(sqlite3.OperationalError, match="too many attached"):
            connection.execute("ATTACH ':memory:' AS scratch")


def test_introspection_pragmas_are_allowed(tools: dict[str, Tool]) -> None:
    """PRAGMA table_info and friends describe tables and stay available to queries."""
    result = run(tools["query"], {"sql": "PRAGMA table_info(orders)"})
    assert not result.is_error
    assert [row["name"] for row in result.value.rows] == ["id", "customer_id", "total", "receipt"]


def test_long_query_is_interrupted(shop: Path) -> None:
    """A statement running past timeout_seconds is stopped with an actionable error."""
    query = {t.name: t for t in SQLiteTools(shop, timeout_seconds=0.2).tools()}["query"]
    endless = (
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"
    )
    result = run(query, {"sql": endless})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "ran longer than 0.2 seconds" in result.content
