"""``SQLiteTools``: list the tables of one SQLite database, describe them, and query it."""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolpacks import Toolbox, ToolError, tool

from toolpacks_sqlite._guard import DENIED_FUNCTIONS, Guard, ReadOnlyConnection, connect_read_only
from toolpacks_sqlite._limits import (
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MAX_VALUE_BYTES,
    LARGEST_VALUE_BYTES,
    MAX_SQL_BYTES,
    ResultBudget,
    is_unsafe_wrapper_use,
)

__all__ = [
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_MAX_ROWS",
    "DEFAULT_MAX_VALUE_BYTES",
    "DEFAULT_TIMEOUT_SECONDS",
    "Column",
    "ForeignKey",
    "Index",
    "QueryResult",
    "SQLiteTools",
    "TableDescription",
    "TableInfo",
]

DEFAULT_MAX_ROWS = 1_000
"""Most rows one query returns unless configured otherwise."""
DEFAULT_TIMEOUT_SECONDS = 10.0
"""How long one statement may run unless configured otherwise."""
BLOB_PREVIEW = 32
"""Bytes of a BLOB value shown (as hex) in query results."""

TAGS = frozenset({"sql", "read"})


@dataclass(frozen=True, slots=True)
class TableInfo:
    """A table or view of the database."""

    name: str
    """Its name."""
    type: str
    """``table`` or ``view``."""


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a table or view."""

    name: str
    """The column name."""
    type: str
    """The declared type (may be empty: SQLite columns are dynamically typed)."""
    not_null: bool
    """Whether NULL is refused."""
    default: str | None
    """The default value's SQL text, if any."""
    primary_key: bool
    """Whether the column is (part of) the primary key."""


@dataclass(frozen=True, slots=True)
class ForeignKey:
    """A reference from a column of this table to another table."""

    column: str
    """The referencing column of this table."""
    references_table: str
    """The referenced table."""
    references_column: str | None
    """The referenced column (None means the other table's primary key)."""


@dataclass(frozen=True, slots=True)
class Index:
    """An index of a table."""

    name: str
    """The index name."""
    unique: bool
    """Whether it enforces uniqueness."""
    columns: list[str]
    """The indexed columns, in order (empty for an index on expressions)."""


@dataclass(frozen=True, slots=True)
class TableDescription:
    """The result of ``describe_table``."""

    name: str
    """The table or view name, as the database spells it."""
    type: str
    """``table`` or ``view``."""
    columns: list[Column]
    """Its columns, in order."""
    foreign_keys: list[ForeignKey]
    """Its references to other tables."""
    indexes: list[Index]
    """Its indexes."""
    sql: str | None
    """The ``CREATE`` statement that defined it."""


@dataclass(frozen=True, slots=True)
class QueryResult:
    """The result of ``query``."""

    columns: list[str]
    """The result's column names, in order (a repeated name gets a suffix: ``id_2``)."""
    rows: list[dict[str, Any]]
    """One object per row, keyed by column name."""
    row_count: int
    """How many rows are returned here."""
    truncated: bool
    """Whether the query produced more rows than returned (see ``note``)."""
    note: str = ""
    """Why rows are missing when ``truncated``: the row limit or the result's byte budget."""


class SQLiteTools(Toolbox):
    """Read-only tools for one SQLite database file.

    Every call opens its own read-only connection (see ``toolpacks_sqlite._guard``), so
    instances are safe to share between threads and two instances on different databases
    never interfere.

    Args:
        database: The database file (``~`` is expanded; resolved once, here). It must exist
            and be a SQLite database.
        max_rows: The most rows one ``query`` returns, whatever ``limit`` it asks for.
        timeout_seconds: How long one statement may run before it is interrupted.
        max_value_bytes: The largest string or BLOB a statement may build or read
            (``SQLITE_LIMIT_LENGTH``); a statement going past it fails at once, before
            allocating.
        max_result_bytes: The most bytes of values (as returned) one ``query`` returns;
            fetching stops there and the result says it was truncated.

    Raises:
        ValueError: The file does not exist, is not a SQLite database, or a limit is not
            positive.
    """

    def __init__(
        self,
        database: str | os.PathLike[str],
        *,
        max_rows: int = DEFAULT_MAX_ROWS,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
    ) -> None:
        if str(database) == ":memory:" or not str(database):
            raise ValueError(
                f"database {str(database)!r} is not a file; a read-only connection to a new "
                "in-memory database would always be empty, so give the path of a database file"
            )
        if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
            raise ValueError(f"max_rows must be a positive integer, got {max_rows!r}")
        if isinstance(timeout_seconds, bool) or not isinstance(timeout_seconds, int | float):
            raise ValueError(f"timeout_seconds must be a number, got {timeout_seconds!r}")
        if timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be positive, got {timeout_seconds!r}")
        _check_bytes("max_value_bytes", max_value_bytes, LARGEST_VALUE_BYTES)
        _check_bytes("max_result_bytes", max_result_bytes, None)
        path = Path(database).expanduser().resolve()
        if not path.is_file():
            raise ValueError(f"database {str(database)!r} does not exist or is not a file")
        self._path = path
        self._max_rows = max_rows
        self._timeout = float(timeout_seconds)
        self._max_value_bytes = max_value_bytes
        self._max_result_bytes = max_result_bytes
        try:
            connection, _ = connect_read_only(path, max_value_bytes=max_value_bytes)
            with closing(connection):
                connection.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except sqlite3.DatabaseError as exc:
            raise ValueError(
                f"{str(database)!r} cannot be read as a SQLite database: {exc}"
            ) from None

    @property
    def database(self) -> Path:
        """The resolved database path."""
        return self._path

    @property
    def max_rows(self) -> int:
        """The most rows one query returns."""
        return self._max_rows

    @property
    def max_value_bytes(self) -> int:
        """The largest string or BLOB a statement may build or read."""
        return self._max_value_bytes

    @property
    def max_result_bytes(self) -> int:
        """The most bytes of values one query returns."""
        return self._max_result_bytes

    def __repr__(self) -> str:
        return (
            f"SQLiteTools(database={str(self._path)!r}, max_rows={self._max_rows}, "
            f"max_value_bytes={self._max_value_bytes}, max_result_bytes={self._max_result_bytes})"
        )

    @tool(tags=TAGS, read_only=True, idempotent=True, open_world=False)
    def list_tables(self) -> list[TableInfo]:
        """List the tables and views of the SQLite database.

        Call this first to learn what the database contains, then describe_table to see a
        table's columns before writing a query.
        """
        rows = self._fetch(
            "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
        return [TableInfo(name, kind) for name, kind in rows]

    @tool(tags=TAGS, read_only=True, idempotent=True, open_world=False)
    def describe_table(self, table: str) -> TableDescription:
        """Describe a table or view: its columns and types, keys, indexes and definition.

        Use it before querying a table to get exact column names and to see how tables are
        related (foreign keys).

        Args:
            table: The table or view name, as list_tables returns it (case is ignored).
        """
        found = self._fetch(
            "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name = ? COLLATE NOCASE",
            (table,),
        )
        if not found:
            names = [t.name for t in self.list_tables()]
            listed = ", ".join(names[:50]) + (", ..." if len(names) > 50 else "")
            raise ToolError(
                f"no table or view named {table!r}; the database has: {listed or 'no tables'}"
            )
        name, kind, sql = found[0]
        quoted = '"' + name.replace('"', '""') + '"'
        columns = [
            Column(col, decl or "", bool(not_null), default, bool(pk))
            for _, col, decl, not_null, default, pk in self._fetch(f"PRAGMA table_info({quoted})")
        ]
        foreign_keys = [
            ForeignKey(row[3], row[2], row[4])
            for row in self._fetch(f"PRAGMA foreign_key_list({quoted})")
        ]
        indexes = []
        for row in self._fetch(f"PRAGMA index_list({quoted})"):
            index = row[1]
            index_quoted = '"' + index.replace('"', '""') + '"'
            indexed = [r[2] for r in self._fetch(f"PRAGMA index_info({index_quoted})") if r[2]]
            indexes.append(Index(index, bool(row[2]), indexed))
        return TableDescription(name, kind, columns, foreign_keys, indexes, sql)

    @tool(tags=TAGS, read_only=True, idempotent=True, open_world=False)
    def query(self, sql: str, limit: int = 100) -> QueryResult:
        """Run one read-only SQL query (SQLite dialect) and return the resulting rows.

        Use list_tables and describe_table first to get table and column names right. Send
        one statement: SELECT (with joins, WITH clauses, aggregates...), EXPLAIN, or PRAGMA
        table_info / index_list / foreign_key_list. The database cannot be changed: INSERT,
        UPDATE, DELETE, CREATE, DROP, ATTACH, transactions and other pragmas are refused.
        Rows come back as objects keyed by column name; when truncated is true there were
        more rows than returned (the note says whether the row limit or the size budget
        stopped it), so aggregate, filter or ORDER BY ... LIMIT in the SQL rather than
        asking for everything. A value over the size limit (1 MB unless configured)
        cannot be built or read: use length() or substr(). load_extension() and
        fts3_tokenizer() are refused.

        Args:
            sql: A single SQLite statement, such as
                "SELECT name, total FROM orders ORDER BY total DESC LIMIT 10".
            limit: The most rows to return (at least 1; larger values are reduced to the
                configured maximum, 1000 by default).
        """
        if not sql.strip():
            raise ToolError("the SQL is empty; send one SELECT statement")
        if limit < 1:
            raise ToolError(f"limit must be at least 1, got {limit}")
        wanted = min(limit, self._max_rows)
        deadline = time.monotonic() + self._timeout
        try:
            return self._query(sql, wanted, deadline, check_printf=True)
        except _UnsafePrintf:
            # A view or trigger calls printf(), which SQLite will not hand to the checked
            # version; SQLite's own printf still stops at the length limit (returning NULL).
            return self._query(sql, wanted, deadline, check_printf=False)

    # -- helpers ----------------------------------------------------------------------------

    def _query(self, sql: str, wanted: int, deadline: float, *, check_printf: bool) -> QueryResult:
        """Run ``sql`` and fetch at most ``wanted`` rows within the byte budget."""
        connection, guard = self._connect(deadline, check_printf=check_printf)
        with closing(connection):
            try:
                cursor = connection.execute(sql)
                columns = _unique([d[0] for d in cursor.description or ()])
                budget = ResultBudget(self._max_result_bytes, columns)
                rows: list[dict[str, Any]] = []
                note = ""
                for raw in cursor:
                    if len(rows) == wanted:
                        note = (
                            f"more rows than the limit of {wanted}; aggregate, filter, or "
                            "ORDER BY ... LIMIT in the SQL"
                        )
                        break
                    values = [_jsonable(value) for value in raw]
                    if not budget.accept(values):
                        note = (
                            f"stopped after {len(rows)} rows: the result reached its size "
                            f"budget of {budget.max_bytes} bytes; select fewer or shorter "
                            "columns (length(), substr()) or fewer rows"
                        )
                        break
                    rows.append(dict(zip(columns, values, strict=True)))
            except sqlite3.ProgrammingError as exc:
                if "one statement" in str(exc):
                    raise ToolError(
                        "send exactly one SQL statement per call; this text holds several "
                        "(remove everything after the first ';')"
                    ) from None
                raise ToolError(f"SQLite refused the statement: {exc}") from None
            except sqlite3.DatabaseError as exc:
                if check_printf and is_unsafe_wrapper_use(exc):
                    raise _UnsafePrintf from None
                raise self._error(exc, guard) from None
        return QueryResult(columns, rows, len(rows), bool(note), note)

    def _connect(
        self, deadline: float | None = None, *, check_printf: bool = True
    ) -> tuple[ReadOnlyConnection, Guard]:
        """A guarded connection whose statements stop after the time budget."""
        if deadline is None:
            deadline = time.monotonic() + self._timeout
        try:
            return connect_read_only(
                self._path,
                deadline=deadline,
                max_value_bytes=self._max_value_bytes,
                check_printf=check_printf,
            )
        except sqlite3.Error as exc:
            raise ToolError(
                f"the database cannot be opened right now ({exc}); it may have been moved or "
                "deleted, so tell the user"
            ) from None

    def _fetch(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
        """Run trusted introspection SQL through the same guarded connection."""
        connection, guard = self._connect()
        with closing(connection):
            try:
                return connection.execute(sql, parameters).fetchall()
            except sqlite3.DatabaseError as exc:
                raise self._error(exc, guard) from None

    def _error(self, exc: sqlite3.DatabaseError, guard: Guard) -> ToolError:
        message = str(exc)
        denied = guard.denied
        if denied or "not authorized" in message or "readonly" in message:
            what = f" ({', '.join(dict.fromkeys(denied))})" if denied else ""
            functions = ", ".join(f"{name}()" for name in sorted(DENIED_FUNCTIONS))
            return ToolError(
                f"refused{what}: this database is read-only; only a single SELECT (or "
                "EXPLAIN, or PRAGMA table_info / index_list / foreign_key_list) can run, "
                f"and {functions} are never available"
            )
        if guard.too_big or "too big" in message:
            what = f"{guard.too_big[0]} result" if guard.too_big else "a value"
            return ToolError(
                f"refused: {what} would be larger than {self._max_value_bytes} bytes, the "
                "most one value may take here; compute less (length(), substr(), "
                "aggregates) instead of building or reading such a large value"
            )
        if "query string is too large" in message:
            return ToolError(
                f"the SQL is longer than {MAX_SQL_BYTES} bytes; send a shorter statement"
            )
        if message == "interrupted":
            return ToolError(
                f"the query ran longer than {self._timeout:g} seconds and was stopped; "
                "filter with WHERE, aggregate, or add LIMIT"
            )
        if "no such" in message:
            hint = "check the names with list_tables and describe_table"
        elif "syntax error" in message or "incomplete input" in message:
            hint = "fix the SQL (SQLite dialect) and try again"
        else:
            hint = "fix the query and try again"
        return ToolError(f"SQLite error: {message}; {hint}")


class _UnsafePrintf(Exception):
    """SQLite refused the checked ``printf`` inside a view or trigger: run without it."""


def _check_bytes(name: str, value: object, largest: int | None) -> None:
    """Refuse a byte limit that is not a positive integer (or is above ``largest``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer (bytes), got {value!r}")
    if largest is not None and value > largest:
        raise ValueError(f"{name} must be at most {largest} (SQLite's ceiling), got {value!r}")


def _unique(names: list[str]) -> list[str]:
    """The column names with repeats renamed ``name_2``, ``name_3``... (never colliding)."""
    taken = set(names)
    out: list[str] = []
    for name in names:
        if name in out:
            number = 2
            while f"{name}_{number}" in taken:
                number += 1
            name = f"{name}_{number}"
            taken.add(name)
        out.append(name)
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        preview = value[:BLOB_PREVIEW].hex()
        more = "..." if len(value) > BLOB_PREVIEW else ""
        return f"<blob: {len(value)} bytes, hex {preview}{more}>"
    return value
