"""What list_tables, describe_table and query return, and their argument errors."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolpacks import Tool, ToolResult

from toolpacks_sqlite import SQLiteTools


def run(tool: Tool, arguments: dict[str, Any]) -> ToolResult:
    """Invoke a tool the way a host would, synchronously."""
    return asyncio.run(tool.invoke(arguments))


# -- definitions -------------------------------------------------------------------------------


def test_tool_names_tags_and_hints(tools: dict[str, Tool]) -> None:
    """Three read-only, idempotent, closed-world tools tagged sql and read."""
    assert list(tools) == ["list_tables", "describe_table", "query"]
    for t in tools.values():
        assert t.tags == {"sql", "read"}
        assert t.hints.read_only is True
        assert t.hints.idempotent is True
        assert t.hints.open_world is False


def test_parameters_are_described(tools: dict[str, Tool]) -> None:
    """Every parameter has a description a model can read."""
    for t in tools.values():
        assert "Args:" not in t.description
        for name, schema in t.input_schema["properties"].items():
            assert schema.get("description"), f"{t.name}.{name}"


@pytest.mark.parametrize(
    ("database", "message"),
    [(":memory:", "in-memory"), ("missing.db", "does not exist")],
)
def test_constructor_refuses_unusable_databases(
    tmp_path: Path, database: str, message: str
) -> None:
    """An in-memory or missing database fails at construction with a clear message."""
    with pytest.raises(ValueError, match=message):
        SQLiteTools(database if database == ":memory:" else tmp_path / database)


def test_constructor_refuses_files_that_are_not_databases(tmp_path: Path) -> None:
    """A text file is not accepted as a database."""
    (tmp_path / "notes.db").write_text("not a database at all, just some words\n" * 100, "utf-8")
    with pytest.raises(ValueError, match="cannot be read as a SQLite database"):
        SQLiteTools(tmp_path / "notes.db")


def test_constructor_refuses_bad_limits(shop: Path) -> None:
    """max_rows and timeout_seconds must be positive."""
    with pytest.raises(ValueError, match="max_rows"):
        SQLiteTools(shop, max_rows=0)
    with pytest.raises(ValueError, match="timeout_seconds"):
        SQLiteTools(shop, timeout_seconds=0)


# -- list_tables and describe_table ------------------------------------------------------------


def test_list_tables_lists_tables_and_views_only(tools: dict[str, Tool]) -> None:
    """Tables and views, sorted, without SQLite's internal tables (sqlite_sequence)."""
    tables = run(tools["list_tables"], {}).value
    assert [(t.name, t.type) for t in tables] == [
        ("big_orders", "view"),
        ("customers", "table"),
        ('odd "name"', "table"),
        ("orders", "table"),
    ]


def test_describe_table_columns_keys_and_indexes(tools: dict[str, Tool]) -> None:
    """Columns with types and constraints, foreign keys and indexes; case is ignored."""
    table = run(tools["describe_table"], {"table": "ORDERS"}).value
    assert table.name == "orders"
    assert table.type == "table"
    assert [(c.name, c.type, c.primary_key) for c in table.columns] == [
        ("id", "INTEGER", True),
        ("customer_id", "INTEGER", False),
        ("total", "REAL", False),
        ("receipt", "BLOB", False),
    ]
    assert table.columns[2].default == "0"
    assert [(k.column, k.references_table, k.references_column) for k in table.foreign_keys] == [
        ("customer_id", "customers", "id")
    ]
    assert [(i.name, i.unique, i.columns) for i in table.indexes] == [
        ("orders_by_customer", False, ["customer_id"])
    ]
    assert table.sql.startswith("CREATE TABLE orders")


def test_describe_table_unique_and_not_null(tools: dict[str, Tool]) -> None:
    """NOT NULL columns and UNIQUE constraints are reported."""
    table = run(tools["describe_table"], {"table": "customers"}).value
    assert [c.name for c in table.columns if c.not_null] == ["name"]
    assert [(i.unique, i.columns) for i in table.indexes] == [(True, ["email"])]


def test_describe_view_and_quoted_names(tools: dict[str, Tool]) -> None:
    """Views are described too, and names needing quotes work."""
    view = run(tools["describe_table"], {"table": "big_orders"}).value
    assert view.type == "view"
    assert [c.name for c in view.columns] == ["id", "customer_id", "total", "receipt"]
    odd = run(tools["describe_table"], {"table": 'odd "name"'}).value
    assert [c.name for c in odd.columns] == ["x"]


def test_describe_unknown_table_lists_tables(tools: dict[str, Tool]) -> None:
    """An unknown table is an error listing the tables that exist."""
    result = run(tools["describe_table"], {"table": "invoices"})
    assert result.is_error
    assert "no table or view named 'invoices'" in result.content
    assert "customers, " in result.content


# -- query -------------------------------------------------------------------------------------


def test_query_returns_rows_as_dicts(tools: dict[str, Tool]) -> None:
    """Rows come back as dicts keyed by column, with the column order."""
    result = run(tools["query"], {"sql": "SELECT id, total FROM orders ORDER BY id"})
    assert not result.is_error
    assert result.value.columns == ["id", "total"]
    assert result.value.rows == [
        {"id": 1, "total": 50.0},
        {"id": 2, "total": 150.0},
        {"id": 3, "total": 300.0},
    ]
    assert result.value.row_count == 3
    assert result.value.truncated is False
    assert result.structured is not None
    assert result.structured["rows"][0] == {"id": 1, "total": 50.0}


def test_query_limit_and_configured_maximum(tools: dict[str, Tool]) -> None:
    """The limit cuts the rows and sets truncated; a larger limit is reduced to max_rows."""
    endless = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x FROM r"
    two = run(tools["query"], {"sql": endless, "limit": 2}).value
    assert two.rows == [{"x": 1}, {"x": 2}]
    assert two.truncated is True
    capped = run(tools["query"], {"sql": endless, "limit": 10_000}).value
    assert capped.row_count == 5
    assert capped.truncated is True


def test_query_renames_repeated_columns_and_shows_blobs(tools: dict[str, Tool]) -> None:
    """Repeated column names get a suffix; BLOBs are shown as size and hex."""
    sql = (
        "SELECT c.id, o.id, o.receipt FROM customers c JOIN orders o "
        "ON o.customer_id = c.id WHERE o.id = 1"
    )
    result = run(tools["query"], {"sql": sql}).value
    assert result.columns == ["id", "id_2", "receipt"]
    assert result.rows == [{"id": 1, "id_2": 1, "receipt": "<blob: 2 bytes, hex 00ff>"}]


def test_query_argument_and_sql_errors(tools: dict[str, Tool]) -> None:
    """Empty SQL, a bad limit, a syntax error and an unknown table give actionable errors."""
    cases: list[tuple[dict[str, Any], str]] = [
        ({"sql": "  "}, "the SQL is empty"),
        ({"sql": "SELECT 1", "limit": 0}, "limit must be at least 1"),
        ({"sql": "SELEC 1"}, "syntax error; fix the SQL"),
        ({"sql": "SELECT * FROM invoices"}, "no such table: invoices; check the names"),
    ]
    for arguments, expected in cases:
        result = run(tools["query"], arguments)
        assert result.is_error, arguments
        assert expected in result.content


def test_two_instances_on_different_databases(
    shop: Path, tmp_path: Path, new_database: Callable[[Path, str], Path]
) -> None:
    """Two SQLiteTools on two databases answer from their own database each."""
    other = new_database(tmp_path / "other.db", "CREATE TABLE t (v); INSERT INTO t VALUES (7);")
    first = {t.name: t for t in SQLiteTools(shop).tools()}
    second = {t.name: t for t in SQLiteTools(other).tools()}
    assert [t.name for t in run(second["list_tables"], {}).value] == ["t"]
    assert run(second["query"], {"sql": "SELECT v FROM t"}).value.rows == [{"v": 7}]
    assert run(first["query"], {"sql": "SELECT v FROM t"}).is_error


def test_database_removed_after_loading(shop: Path) -> None:
    """A database deleted after the pack loaded gives an error, not a crash."""
    query = {t.name: t for t in SQLiteTools(shop).tools()}["query"]
    shop.unlink()
    result = run(query, {"sql": "SELECT 1"})
    assert result.is_error
    assert "cannot be opened" in result.content
