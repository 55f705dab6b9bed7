"""What the command line prints of toolpacks' log records, on stderr.

One handler on the ``toolpacks`` logger for the whole command: every record is redacted
(``LogRedactor``), printed once (a pack that failed is one line, however often it is
mentioned), and records of resolved tool-name conflicts (``on_conflict = "first"`` or
``"priority"`` picking a winner) are shown only with ``--verbose``; ``doctor`` reports them
in its findings instead.

A pack that failed to load is reported once per command: its warning is held until the
command ends, and dropped when the command reported the failure itself (``list --tools``,
``doctor`` and ``show`` list it; an error naming its cause ends the command).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from toolpacks.core._logscrub import install, known_secrets, remember, scrub_record
from toolpacks.core._secrets import REDACTED

__all__ = [
    "LogRedactor",
    "cli_logging",
    "conflict_notes",
    "is_conflict_record",
    "pack_failures_shown",
    "redacted_logs",
    "release_pack_failures",
]

LOGGER = "toolpacks"


def is_conflict_record(record: logging.LogRecord) -> bool:
    """Whether ``record`` tells of a tool-name conflict a policy resolved.

    The host's conflict policies log on the ``toolpacks.conflicts`` logger.
    """
    return record.name.startswith(f"{LOGGER}.conflicts") and record.levelno < logging.ERROR


class LogRedactor(logging.Filter):
    """Rewrites each log record with secrets and token-like strings redacted.

    Set ``secrets`` once they are known; until then only token-like strings, URL passwords
    and the secrets hosts remembered (``core._logscrub``) are hidden. The values set are
    remembered too, for as long as the redactor lives, so that records of the whole
    ``toolpacks`` tree and of the MCP SDK, whatever handler shows them, are scrubbed of
    them as well.
    """

    def __init__(self) -> None:
        super().__init__()
        self._secrets: tuple[str, ...] = ()
        install()

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values to redact (see ``config_secrets``)."""
        return self._secrets

    @secrets.setter
    def secrets(self, values: tuple[str, ...]) -> None:
        self._secrets = tuple(values)
        remember(self, self._secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the message, the traceback and the stack of ``record`` in place."""
        scrub_record(record, (*self._secrets, *known_secrets()), REDACTED)
        return True


_PACK_FAILED = " failed to load: "
"""What the warnings of a pack that failed to load say between the pack and the cause."""


def _failure_cause(record: logging.LogRecord) -> str | None:
    """The cause a pack-failure warning gives, or None for any other record."""
    if record.levelno != logging.WARNING:
        return None
    try:
        message = record.getMessage()
    except Exception:  # a bad format string is the handler's to report
        return None
    _, found, cause = message.partition(_PACK_FAILED)
    return cause if found and cause else None


class _Shown(logging.Filter):
    """Drops what the command's log does not show.

    Audit records (they are for the operator's own handler of ``toolpacks.audit``), conflict
    records (unless verbose) and, with ``once``, repeated messages.

    With ``once``, pack-failure warnings are also held (see ``release_pack_failures``).
    """

    def __init__(self, verbose: bool, once: bool) -> None:
        super().__init__()
        self.verbose = verbose
        self.once = once
        self.seen: set[tuple[int, str]] = set()
        self.held: list[logging.LogRecord] = []
        self.shown_elsewhere = False

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "toolpacks.audit":  # for the operator's own handler, not this log
            return False
        if not self.verbose and is_conflict_record(record):
            return False
        if self.once:
            key = (record.levelno, record.getMessage())
            if key in self.seen:
                return False
            self.seen.add(key)
            if _failure_cause(record) is not None:
                if not self.shown_elsewhere:
                    self.held.append(record)
                return False
        return True


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return f"toolpacks: {record.levelname.lower()}: {text}"


_active: list[LogRedactor] = []
"""The redactor of the command running now (innermost last)."""
_shown: list[tuple[logging.Handler, _Shown]] = []
"""The handler of the command running now and its filter (innermost last)."""


def _handler(verbose: bool, once: bool) -> tuple[logging.Handler, LogRedactor, _Shown]:
    redactor = LogRedactor()
    shown = _Shown(verbose, once)
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.INFO if verbose else logging.WARNING)
    handler.setFormatter(_Formatter("%(message)s"))
    handler.addFilter(redactor)
    handler.addFilter(shown)
    return handler, redactor, shown


def pack_failures_shown() -> None:
    """Drop the running command's pack-failure warnings: its own output lists every failure."""
    if _shown:
        _, shown = _shown[-1]
        shown.shown_elsewhere = True
        shown.held.clear()


def release_pack_failures(reported: str = "") -> None:
    """Print the held pack-failure warnings, but those whose cause ``reported`` already gives.

    Args:
        reported: The text of the error that ends the command (empty when it succeeded).
    """
    if not _shown:
        return
    handler, shown = _shown[-1]
    held, shown.held = shown.held, []
    for record in held:
        cause = _failure_cause(record)
        if not (reported and cause and cause.splitlines()[0] in reported):
            handler.emit(record)  # the filters ran (and redacted it) when it was held


@contextmanager
def cli_logging(*, verbose: bool = False, once: bool = True) -> Iterator[LogRedactor]:
    """Print toolpacks' log records on stderr while a command runs.

    Args:
        verbose: Show INFO records and resolved conflicts too.
        once: Print each message once (off for ``serve``, which runs for long).
    """
    logger = logging.getLogger(LOGGER)
    handler, redactor, shown = _handler(verbose, once)
    level = logger.level
    if verbose:
        logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    _active.append(redactor)
    _shown.append((handler, shown))
    try:
        yield redactor
    finally:
        release_pack_failures()
        _shown.remove((handler, shown))
        _active.remove(redactor)
        logger.removeHandler(handler)
        logger.setLevel(level)


@contextmanager
def redacted_logs() -> Iterator[LogRedactor]:
    """The redactor of the running command's log handler, for ``show`` and ``doctor``.

    They set its secrets. Outside a command, a handler of its own serves for the duration.
    """
    if _active:
        yield _active[-1]
        return
    with cli_logging(once=False) as redactor:
        yield redactor


@contextmanager
def conflict_notes() -> Iterator[list[str]]:
    """Collect the messages of resolved conflicts logged meanwhile (for ``doctor``)."""
    notes: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if is_conflict_record(record):
                notes.append(record.getMessage())

    collector = Collect(logging.DEBUG)
    logger = logging.getLogger(LOGGER)
    logger.addHandler(collector)
    try:
        yield notes
    finally:
        logger.removeHandler(collector)
