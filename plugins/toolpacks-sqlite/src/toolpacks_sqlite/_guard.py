"""Read-only connections, enforced by SQLite itself at four independent layers.

1. The file is opened with the URI ``file:...?mode=ro``: SQLite cannot write to it.
2. ``PRAGMA query_only = ON``: SQLite refuses any statement that would change a database.
3. An authorizer callback allows only what reading needs (``SELECT``, reading columns,
   functions, recursive CTEs, and a few introspection pragmas) and denies everything else
   while the statement is compiled: ``INSERT``, ``UPDATE``, ``DELETE``, DDL, ``ATTACH`` (which
   ``VACUUM INTO`` uses too), ``DETACH``, transactions, ``ANALYZE``, other pragmas (such as
   ``writable_schema`` or ``query_only = OFF``).
   ``load_extension`` and ``fts3_tokenizer`` (which returns a native pointer, and with two
   arguments installs one) are refused as functions.
4. The limit on attached databases is 0, and ``trusted_schema`` is off, so a crafted schema
   cannot call functions with side effects from views or triggers.

Size limits (the largest value, statement and result) come from ``_limits`` and are set
here too, on every connection.

No statement text is inspected: SQLite decides what a statement does. Python's
``Connection.execute`` runs exactly one statement, so ``SELECT 1; DELETE ...`` is refused
before anything runs. A progress handler stops a query that runs past its time budget.
"""

from __future__ import annotations

import sqlite3
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolpacks_sqlite._limits import DEFAULT_MAX_VALUE_BYTES, apply_limits, install_checked_printf

__all__ = [
    "DENIED_FUNCTIONS",
    "READ_PRAGMAS",
    "Guard",
    "ReadOnlyConnection",
    "connect_read_only",
    "database_uri",
]

READ_PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list"}
)
"""Pragmas that describe a table or index and can never change anything."""

_ALLOWED = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE, sqlite3.SQLITE_FUNCTION}
)
DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer"})
"""Functions refused whatever their arguments: they load code or expose native pointers."""
_SCHEMA_TABLES = frozenset(
    {"sqlite_master", "sqlite_temp_master", "sqlite_schema", "sqlite_temp_schema"}
)

_ACTION_NAMES = (
    "ALTER_TABLE",
    "ANALYZE",
    "ATTACH",
    "CREATE_INDEX",
    "CREATE_TABLE",
    "CREATE_TEMP_INDEX",
    "CREATE_TEMP_TABLE",
    "CREATE_TEMP_TRIGGER",
    "CREATE_TEMP_VIEW",
    "CREATE_TRIGGER",
    "CREATE_VIEW",
    "CREATE_VTABLE",
    "DELETE",
    "DETACH",
    "DROP_INDEX",
    "DROP_TABLE",
    "DROP_TEMP_INDEX",
    "DROP_TEMP_TABLE",
    "DROP_TEMP_TRIGGER",
    "DROP_TEMP_VIEW",
    "DROP_TRIGGER",
    "DROP_VIEW",
    "DROP_VTABLE",
    "FUNCTION",
    "INSERT",
    "PRAGMA",
    "REINDEX",
    "SAVEPOINT",
    "TRANSACTION",
    "UPDATE",
)
_ACTIONS = {
    code: name.replace("_", " ")
    for name in _ACTION_NAMES
    if (code := getattr(sqlite3, f"SQLITE_{name}", None)) is not None
}

_PROGRESS_STEPS = 10_000
"""SQLite virtual-machine steps between two checks of the time budget."""


class Guard:
    """The authorizer of one connection; remembers what it denied, for the error message."""

    def __init__(self) -> None:
        self.denied: list[str] = []
        """What was refused, such as ``DELETE on 'orders'`` or ``PRAGMA writable_schema``."""
        self.too_big: list[str] = []
        """Checked functions that refused a result over the length limit (``printf()``)."""

    def __call__(
        self,
        action: int,
        arg1: str | None,
        arg2: str | None,
        database: str | None,
        trigger: str | None,
    ) -> int:
        """Allow reading; deny (and remember) anything else. Called by SQLite."""
        if action in _ALLOWED:
            if action != sqlite3.SQLITE_FUNCTION or (arg2 or "").lower() not in DENIED_FUNCTIONS:
                return sqlite3.SQLITE_OK
        elif action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in READ_PRAGMAS:
            return sqlite3.SQLITE_OK
        self.denied.append(_describe(action, arg1, arg2))
        return sqlite3.SQLITE_DENY


def _describe(action: int, arg1: str | None, arg2: str | None) -> str:
    name = _ACTIONS.get(action, f"operation {action}")
    if action == sqlite3.SQLITE_FUNCTION:
        return f"the function {arg2}()"
    if action == sqlite3.SQLITE_PRAGMA:
        return f"PRAGMA {arg1}" + (f" = {arg2}" if arg2 is not None else "")
    if action in (sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE):
        if arg1 in _SCHEMA_TABLES:
            return "a schema change (CREATE, DROP or ALTER)"
        return f"{name} on {arg1!r}"
    return f"{name} {arg1!r}" if arg1 else name


def database_uri(path: Path) -> str:
    """The read-only URI of a database file (special characters escaped)."""
    return f"file:{urllib.parse.quote(str(path))}?mode=ro"


class ReadOnlyConnection(sqlite3.Connection):
    """A connection that also runs its ``cleanups`` (the checked functions' helpers) on close."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cleanups: list[Callable[[], None]] = []
        """Called, in order, when the connection is closed."""

    def close(self) -> None:
        """Run the cleanups, then close the connection."""
        try:
            while self.cleanups:
                self.cleanups.pop(0)()
        finally:
            super().close()


def connect_read_only(
    path: Path,
    *,
    deadline: float | None = None,
    max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
    check_printf: bool = True,
) -> tuple[ReadOnlyConnection, Guard]:
    """Open ``path`` read-only with every layer of the module docstring in place.

    Args:
        path: The database file (absolute).
        deadline: A ``time.monotonic()`` value after which running statements are
            interrupted (``sqlite3.OperationalError: interrupted``); None for no limit.
        max_value_bytes: The largest string or BLOB a statement may build or read.
        check_printf: Replace ``printf``/``format`` with the checked version that fails
            past the length limit (see ``_limits``); off only to run a statement whose
            views or triggers call ``printf``, which SQLite refuses to hand to an
            application function.

    Returns:
        The connection (the caller closes it) and its guard.
    """
    connection = sqlite3.connect(
        database_uri(path), uri=True, isolation_level=None, factory=ReadOnlyConnection
    )
    try:
        connection.execute("PRAGMA query_only = ON")
        connection.execute("PRAGMA trusted_schema = OFF")
        # Load the schema before the size limits: they apply to its CREATE statements too.
        connection.execute("SELECT count(*) FROM sqlite_master").fetchall()
        apply_limits(connection, max_value_bytes=max_value_bytes)
        guard = Guard()
        if check_printf:
            installed = install_checked_printf(
                connection, max_value_bytes=max_value_bytes, refused=guard.too_big
            )
            connection.cleanups.extend(checked.close for checked in installed)
        connection.set_authorizer(guard)
        if deadline is not None:
            connection.set_progress_handler(_past(deadline), _PROGRESS_STEPS)
    except BaseException:
        connection.close()
        raise
    return connection, guard


def _past(deadline: float) -> Callable[[], int]:
    def check() -> int:
        return 1 if time.monotonic() > deadline else 0

    return check
