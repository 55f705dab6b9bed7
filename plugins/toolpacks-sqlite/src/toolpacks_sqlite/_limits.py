"""Size limits: no value, statement or result can make the process allocate without bound.

Three layers, all per connection:

1. ``sqlite3.Connection.setlimit``: ``SQLITE_LIMIT_LENGTH`` caps every string or BLOB SQLite
   builds (``randomblob(5e8)``, ``zeroblob(1e9)``, ``replace``, ``group_concat``, ``||`` ...)
   and ``SQLITE_LIMIT_SQL_LENGTH`` caps the statement text. SQLite checks the length *before*
   allocating and fails the statement with ``string or blob too big``. The limits are set
   after the schema is loaded, since they would also apply to the database's own ``CREATE``
   statements.
2. ``printf()`` / ``format()`` are the one exception in SQLite: past the length limit they
   return NULL instead of failing. They are replaced on each connection by a checked
   version, which formats with SQLite's own ``printf`` on a private in-memory connection
   under the same limit and turns that NULL into an error (and records the refusal).
   SQLite refuses application functions inside views and triggers when ``trusted_schema``
   is off, so a statement using a view that calls ``printf`` is run again without the
   checked version (``is_unsafe_wrapper_use``): there, ``printf`` past the limit still
   allocates nothing and returns NULL.
3. ``ResultBudget`` adds up the size of the values a query returns while they are fetched,
   so the caller stops at a byte budget instead of materialising every row.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

__all__ = [
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_MAX_VALUE_BYTES",
    "LARGEST_VALUE_BYTES",
    "MAX_SQL_BYTES",
    "CheckedPrintf",
    "ResultBudget",
    "apply_limits",
    "install_checked_printf",
    "is_unsafe_wrapper_use",
    "value_size",
]

DEFAULT_MAX_VALUE_BYTES = 1_000_000
"""Largest string or BLOB a statement may build or read, unless configured otherwise."""
LARGEST_VALUE_BYTES = 1_000_000_000
"""SQLite's own ceiling for ``SQLITE_LIMIT_LENGTH`` (a larger setting is refused)."""
DEFAULT_MAX_RESULT_BYTES = 2_000_000
"""Most bytes of values one query returns, unless configured otherwise."""
MAX_SQL_BYTES = 100_000
"""Longest statement text accepted from the model."""
_PRINTF_NAMES = ("printf", "format") if sqlite3.sqlite_version_info >= (3, 38) else ("printf",)
"""SQLite's names for its printf function (``format`` exists since SQLite 3.38)."""
_UNSAFE_USE = frozenset(f"unsafe use of {name}()" for name in _PRINTF_NAMES)
_SPEC = re.compile(r"%[-+ 0#,!]*(\*|\d+)?(?:\.(\*|\d*))?l{0,2}(.?)", re.DOTALL)
"""One conversion of SQLite's printf: flags, width, precision, size, conversion letter."""
_PRECISION_CAPS = frozenset("szqQw")
"""Conversions whose precision caps the output instead of growing it."""


def apply_limits(connection: sqlite3.Connection, *, max_value_bytes: int) -> None:
    """Set the size limits of the module docstring on ``connection``.

    Call it once the schema is loaded (see the module docstring).

    Args:
        connection: An open connection.
        max_value_bytes: The largest string or BLOB SQLite may build or read.
    """
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max_value_bytes)
    connection.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_BYTES)
    connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)


class CheckedPrintf:
    """SQLite's ``printf`` under a length limit, failing instead of returning NULL.

    Formatting is delegated to SQLite's own ``printf`` on a private in-memory connection
    (opened on first use, in the thread that runs the query, and closed with ``close``), so
    results are exactly SQLite's.

    Args:
        max_value_bytes: The largest result allowed.
        refused: Where a refusal (``"printf()"``) is recorded before the call fails.
        name: The SQL name the function is called by, for the error message.
    """

    def __init__(self, max_value_bytes: int, refused: list[str], name: str = "printf") -> None:
        self._limit = max_value_bytes
        self._refused = refused
        self._name = name
        self._helper: sqlite3.Connection | None = None
        self._sql: dict[int, str] = {}

    def __call__(self, *arguments: Any) -> str | None:
        """Format like SQLite's ``printf``; raise when the result would be too long."""
        if not arguments or arguments[0] is None:
            return None
        if _grows_past(str(arguments[0]), arguments[1:], self._limit):
            # SQLite would give up too, but only after looping up to width times.
            self._refused.append(f"{self._name}()")
            raise ValueError(f"{self._name}() width or precision over {self._limit}")
        if self._helper is None:
            self._helper = sqlite3.connect(":memory:")
            self._helper.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self._limit)
        sql = self._sql.get(len(arguments))
        if sql is None:
            sql = self._sql[len(arguments)] = f"SELECT printf({', '.join('?' * len(arguments))})"
        result: str | None = self._helper.execute(sql, arguments).fetchone()[0]
        if result is None:
            self._refused.append(f"{self._name}()")
            raise ValueError(f"{self._name}() result longer than {self._limit} bytes")
        return result

    def close(self) -> None:
        """Close the private connection, if it was opened."""
        if self._helper is not None:
            self._helper.close()
            self._helper = None


def _grows_past(format_: str, arguments: tuple[Any, ...], limit: int) -> bool:
    """Whether a width or precision in ``format_`` alone asks for more than ``limit`` bytes.

    Follows SQLite's printf: ``*`` takes the next argument as an integer, every other
    conversion but ``%%`` takes one argument. A false answer proves nothing (the result is
    still checked); a true one is certain, so the call can fail before SQLite loops.
    """
    taken = 0

    def number(text: str | None) -> int:
        nonlocal taken
        if text != "*":
            return int(text) if text else 0
        value = arguments[taken] if taken < len(arguments) else 0
        taken += 1
        try:
            return abs(int(float(value)))
        except (TypeError, ValueError, OverflowError):
            return 0

    for spec in _SPEC.finditer(format_):
        width, precision, conversion = spec.groups()
        if number(width) > limit:
            return True
        if number(precision) > limit and conversion not in _PRECISION_CAPS:
            return True
        if conversion != "%":
            taken += 1
    return False


def install_checked_printf(
    connection: sqlite3.Connection, *, max_value_bytes: int, refused: list[str]
) -> list[CheckedPrintf]:
    """Replace ``printf`` (and ``format``) on ``connection`` with ``CheckedPrintf``.

    Returns:
        The installed functions; call their ``close`` when the connection closes.
    """
    installed = []
    for name in _PRINTF_NAMES:
        checked = CheckedPrintf(max_value_bytes, refused, name)
        connection.create_function(name, -1, checked, deterministic=True)
        installed.append(checked)
    return installed


def is_unsafe_wrapper_use(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLite refusing the checked ``printf`` inside a view or trigger."""
    return str(exc) in _UNSAFE_USE


def value_size(value: Any) -> int:
    """About how many bytes ``value`` takes in a JSON result (a string's UTF-8 length)."""
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    if value is None:
        return 4
    if isinstance(value, bytes):
        return len(value)
    return len(repr(value))


class ResultBudget:
    """Counts the bytes of the rows a query returns, against a budget.

    Args:
        max_bytes: The budget.
        columns: The result's column names (each row repeats them as keys).
    """

    def __init__(self, max_bytes: int, columns: list[str]) -> None:
        self.max_bytes = max_bytes
        """The budget, in bytes."""
        self.used = 0
        """Bytes taken by the rows accepted so far."""
        self._per_row = sum(value_size(name) + 4 for name in columns)

    def accept(self, row: list[Any]) -> bool:
        """Count ``row`` (its values as returned) and whether it still fits the budget.

        A row that does not fit is not counted; the caller stops fetching.
        """
        size = self._per_row + sum(value_size(value) for value in row)
        if self.used + size > self.max_bytes:
            return False
        self.used += size
        return True
