"""Size limits: huge values fail before allocating, results stop at a byte budget.

Also: ``fts3_tokenizer`` (a native pointer) is refused, and the database's own schema is not
held to the limits meant for the model's statements.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolpacks import Tool, ToolResult

import toolpacks_sqlite
from toolpacks_sqlite import SQLiteTools
from toolpacks_sqlite._guard import connect_read_only
from toolpacks_sqlite._limits import value_size

HUGE = {
    "randomblob": "SELECT randomblob(5e8)",
    "zeroblob": "SELECT zeroblob(1e9)",
    "printf": "SELECT printf('%.*c', 5e8, 'x')",
    "format": "SELECT format('%.*c', 5e8, 'x')",
    "printf_width": "SELECT printf('%900000000d', 1)",
    "printf_grows": "SELECT printf('%s%s', x, x) FROM (SELECT printf('%.*c', 600000, 'y') AS x)",
    "length_of_zeroblob": "SELECT length(zeroblob(1e9))",
    "concat": "SELECT randomblob(600000) || randomblob(600000)",
    "replace": "SELECT replace(printf('%.*c', 900000, 'x'), 'x', 'yy')",
    "group_concat": (
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r LIMIT 5) "
        "SELECT group_concat(hex(randomblob(300000))) FROM r"
    ),
}


def run(tool: Tool, arguments: dict[str, Any]) -> ToolResult:
    """Invoke a tool the way a host would, synchronously."""
    return asyncio.run(tool.invoke(arguments))


def query_tool(database: Path, **settings: Any) -> Tool:
    """The query tool of a ``SQLiteTools`` on ``database`` with ``settings``."""
    return {t.name: t for t in SQLiteTools(database, **settings).tools()}["query"]


# -- values: refused before they are allocated -------------------------------------------------


@pytest.mark.parametrize("sql", list(HUGE.values()), ids=list(HUGE))
def test_huge_values_fail_with_a_clear_error(tools: dict[str, Tool], sql: str) -> None:
    """Building a value over 1,000,000 bytes is an error result naming the limit."""
    result = run(tools["query"], {"sql": sql})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "would be larger than 1000000 bytes" in result.content
    assert "length(), substr()" in result.content


def test_huge_values_never_reach_the_memory(shop: Path) -> None:
    """In a fresh process, the three attacks of the issue leave the peak RSS under 300 MB."""
    script = textwrap.dedent(
        """
        import asyncio, json, sys
        from toolpacks_sqlite import SQLiteTools

        query = {t.name: t for t in SQLiteTools(sys.argv[1]).tools()}["query"]
        errors = []
        for sql in sys.argv[2:]:
            errors.append(asyncio.run(query.invoke({"sql": sql})).is_error)
        with open("/proc/self/status", encoding="ascii") as status:
            peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
        print(json.dumps({"errors": errors, "peak_kib": peak}))
        """
    )
    attacks = [HUGE["randomblob"], HUGE["zeroblob"], HUGE["printf"], HUGE["group_concat"]]
    done = subprocess.run(
        [sys.executable, "-c", script, str(shop), *attacks],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout)
    assert report["errors"] == [True] * len(attacks)
    assert report["peak_kib"] < 300 * 1024


def test_value_limit_is_a_setting(shop: Path) -> None:
    """max_value_bytes moves the limit; values under it still work."""
    query = query_tool(shop, max_value_bytes=1_000)
    assert run(query, {"sql": "SELECT length(randomblob(900)) AS n"}).value.rows == [{"n": 900}]
    refused = run(query, {"sql": "SELECT randomblob(2000)"})
    assert refused.is_error
    assert "larger than 1000 bytes" in refused.content
    formatted = run(query, {"sql": "SELECT printf('%.*c', 5, 'x') AS p"})
    assert formatted.value.rows == [{"p": "xxxxx"}]
    assert run(query, {"sql": "SELECT printf('%.*c', 2000, 'x')"}).is_error


def test_stored_value_over_the_limit_is_refused(
    tmp_path: Path, new_database: Callable[[Path, str], Path]
) -> None:
    """Reading a stored value larger than max_value_bytes fails instead of loading it."""
    database = new_database(
        tmp_path / "big.db",
        "CREATE TABLE docs (id INTEGER, body TEXT);"
        "INSERT INTO docs VALUES (1, 'short'), (2, printf('%.*c', 5000, 'x'));",
    )
    query = query_tool(database, max_value_bytes=1_000)
    assert run(query, {"sql": "SELECT body FROM docs WHERE id = 1"}).value.rows == [
        {"body": "short"}
    ]
    refused = run(query, {"sql": "SELECT body FROM docs WHERE id = 2"})
    assert refused.is_error
    assert "larger than 1000 bytes" in refused.content


def test_schema_is_not_held_to_the_limits(
    tmp_path: Path, new_database: Callable[[Path, str], Path]
) -> None:
    """A CREATE statement longer than the limits still loads (the limits come after it)."""
    long_name = "a_column_with_a_name_long_enough_to_make_the_view_long"
    columns = ", ".join(f"x + {i} AS {long_name}_{i}" for i in range(1_500))  # > 100,000 bytes
    database = new_database(
        tmp_path / "wide.db",
        f"CREATE TABLE t (x); INSERT INTO t VALUES (1); CREATE VIEW v AS SELECT {columns} FROM t;",
    )
    query = query_tool(database, max_value_bytes=1_000)
    assert run(query, {"sql": "SELECT x FROM t"}).value.rows == [{"x": 1}]
    last = f"{long_name}_1499"
    assert run(query, {"sql": f"SELECT {last} FROM v"}).value.rows == [{last: 1_500}]


def test_statement_text_is_capped(tools: dict[str, Tool]) -> None:
    """SQL text over 100,000 bytes is refused with a message saying so."""
    result = run(tools["query"], {"sql": "SELECT " + "1 + " * 30_000 + "1"})
    assert result.is_error
    assert "the SQL is longer than 100000 bytes" in result.content


def test_printf_in_a_view_still_works(
    tmp_path: Path, new_database: Callable[[Path, str], Path]
) -> None:
    """A view calling printf runs (SQLite keeps its own printf there, still length-capped)."""
    database = new_database(
        tmp_path / "view.db",
        "CREATE TABLE t (x); INSERT INTO t VALUES (42);"
        "CREATE VIEW v AS SELECT printf('%05d', x) AS p FROM t;",
    )
    query = query_tool(database)
    assert run(query, {"sql": "SELECT p FROM v"}).value.rows == [{"p": "00042"}]
    capped = run(query, {"sql": "SELECT p, printf('%.*c', 2000000, 'x') AS big FROM v"})
    assert capped.value.rows == [{"p": "00042", "big": None}]


def test_checked_printf_matches_sqlite(tools: dict[str, Tool]) -> None:
    """The checked printf formats exactly like SQLite's, precision caps included."""
    sql = (
        "SELECT printf('%.5000000s|%*d|%%|%.2f|%-4s|%q', 'abc', 3, 7, 3.14159, 'ab', 'it''s')"
        " AS p, format('%d items', 3) AS f, printf(NULL) AS n"
    )
    rows = run(tools["query"], {"sql": sql}).value.rows
    assert rows == [{"p": "abc|  7|%|3.14|ab  |it''s", "f": "3 items", "n": None}]


def test_checked_printf_helpers_close_with_the_connection(shop: Path) -> None:
    """Closing the connection closes the private connections of the checked printf."""
    connection, _ = connect_read_only(shop)
    assert connection.execute("SELECT printf('%d', 7)").fetchone() == ("7",)
    helpers = [cleanup.__self__ for cleanup in connection.cleanups]
    assert helpers
    connection.close()
    assert connection.cleanups == []
    assert all(helper._helper is None for helper in helpers)


# -- fts3_tokenizer ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT fts3_tokenizer('simple')",
        "SELECT fts3_tokenizer('simple', x'0000000000000000')",
        "SELECT hex(FTS3_TOKENIZER('porter'))",
        "SELECT * FROM (SELECT fts3_tokenizer('simple') AS p)",
    ],
)
def test_fts3_tokenizer_is_refused(tools: dict[str, Tool], sql: str) -> None:
    """fts3_tokenizer, which returns (or installs) a native pointer, is refused."""
    result = run(tools["query"], {"sql": sql})
    assert result.is_error
    assert "refused (the function" in result.content
    assert "fts3_tokenizer()" in result.content
    assert "never available" in result.content


def test_fts3_tokenizer_in_a_view_is_refused(
    tmp_path: Path, new_database: Callable[[Path, str], Path]
) -> None:
    """A view calling fts3_tokenizer is refused too."""
    database = new_database(
        tmp_path / "tok.db", "CREATE VIEW leak AS SELECT fts3_tokenizer('simple') AS p;"
    )
    result = run(query_tool(database), {"sql": "SELECT * FROM leak"})
    assert result.is_error
    assert "fts3_tokenizer" in result.content


# -- the byte budget of a result ---------------------------------------------------------------

ROWS_OF_100 = (
    "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r LIMIT 1000) "
    "SELECT x, printf('%.*c', 100, 'v') AS text FROM r"
)


def test_large_result_is_cut_at_the_budget(shop: Path) -> None:
    """Rows stop at max_result_bytes; the result says so and how to ask for less."""
    result = run(query_tool(shop, max_result_bytes=10_000), {"sql": ROWS_OF_100, "limit": 1000})
    assert not result.is_error
    value = result.value
    assert value.truncated is True
    assert 0 < value.row_count < 1000
    assert value.rows[0] == {"x": 1, "text": "v" * 100}
    assert value.note.startswith(f"stopped after {value.row_count} rows")
    assert "size budget of 10000 bytes" in value.note
    used = sum(value_size(k) + 4 + value_size(v) for row in value.rows for k, v in row.items())
    assert used <= 10_000
    assert len(json.dumps(result.structured)) < 20_000


def test_default_budget_cuts_a_multi_megabyte_result(shop: Path) -> None:
    """With the defaults, 1000 rows of 5 KB (5 MB) stop at the 2,000,000-byte budget."""
    sql = ROWS_OF_100.replace("100, 'v'", "5000, 'v'")
    value = run(query_tool(shop), {"sql": sql, "limit": 1000}).value
    assert value.truncated is True
    assert 300 < value.row_count < 400
    assert "size budget of 2000000 bytes" in value.note


def test_first_row_over_the_budget(shop: Path) -> None:
    """A row alone over the budget gives no rows, truncated, and the note."""
    value = run(query_tool(shop, max_result_bytes=50), {"sql": ROWS_OF_100}).value
    assert (value.rows, value.row_count, value.truncated) == ([], 0, True)
    assert value.note.startswith("stopped after 0 rows")


def test_within_budget_and_limit_has_no_note(shop: Path) -> None:
    """A result that fits both limits is whole, with an empty note."""
    value = run(query_tool(shop), {"sql": ROWS_OF_100, "limit": 1000}).value
    assert (value.row_count, value.truncated, value.note) == (1000, False, "")


def test_row_limit_note(tools: dict[str, Tool]) -> None:
    """Stopping at the row limit says so in the note too."""
    value = run(tools["query"], {"sql": ROWS_OF_100, "limit": 2}).value
    assert value.truncated is True
    assert value.note.startswith("more rows than the limit of 2")


# -- settings ----------------------------------------------------------------------------------


def test_limits_are_pack_settings(shop: Path) -> None:
    """[packs.sqlite] max_value_bytes and max_result_bytes reach the tools."""
    tools = toolpacks_sqlite.tools_from_config(
        {"database": str(shop), "max_value_bytes": 5_000, "max_result_bytes": 7_000}
    )
    assert (tools.max_value_bytes, tools.max_result_bytes) == (5_000, 7_000)
    defaults = toolpacks_sqlite.tools_from_config({"database": str(shop)})
    assert (defaults.max_value_bytes, defaults.max_result_bytes) == (1_000_000, 2_000_000)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_value_bytes": 0}, "max_value_bytes must be a positive integer"),
        ({"max_value_bytes": "1MB"}, "max_value_bytes must be a positive integer"),
        ({"max_value_bytes": 2_000_000_000}, "max_value_bytes must be at most 1000000000"),
        ({"max_result_bytes": True}, "max_result_bytes must be a positive integer"),
        ({"max_result_bytes": -5}, "max_result_bytes must be a positive integer"),
    ],
)
def test_bad_limits_are_refused(shop: Path, settings: dict[str, Any], message: str) -> None:
    """Non-positive, non-integer or too large limits fail at construction."""
    with pytest.raises(ValueError, match=message):
        toolpacks_sqlite.tools_from_config({"database": str(shop), **settings})
