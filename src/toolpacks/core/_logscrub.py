"""Secrets kept out of every log record toolpacks emits or relays.

Python applies a logger's filters only to records logged on that very logger, never to those
of its children, so a filter on ``toolpacks`` would miss ``toolpacks.mcp``, and one on ``mcp``
would miss ``mcp.client.stdio``. ``install`` therefore wraps the log record factory, once per
process: each record of a covered logger tree (``toolpacks``, and ``mcp``, the MCP SDK's,
whose records reach the same handlers when toolpacks runs MCP clients and servers) is
scrubbed as it is made, before any filter or handler, the application's included, sees it.
Records of other loggers are left alone; the factory in place before is still used.

Scrubbed are the message with its arguments (formatted, then the secrets and their encoded
forms masked, see ``redact_text``), the traceback text and the stack. A record holding no
secret keeps its message template and arguments.

The secrets are those ``remember``-ed, each set held as long as its owner lives (a host's
plugin manager, a command's log handler), plus token-shaped strings and URL passwords.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Iterable
from typing import Any

from toolpacks.core._secrets import MASK, redact_text

__all__ = ["TREES", "install", "known_secrets", "remember", "scrub_record"]

TREES = ("toolpacks", "mcp")
"""The logger trees whose records are scrubbed: toolpacks' own and the MCP SDK's."""

_lock = threading.RLock()  # reentrant: a finalizer run by the collector may log
_owned: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()
_installed = False
_WITHHELD = "(a log message withheld: it could not be checked for secrets)"


def remember(owner: object, values: Iterable[str]) -> None:
    """Mask ``values`` in covered log records for as long as ``owner`` lives.

    Installs the scrubbing (``install``) if that was not done yet.

    Args:
        owner: What the secrets belong to (any object that can be weakly referenced).
        values: The secret strings (empty ones are ignored).
    """
    found = tuple(v for v in values if v)
    install()
    if not found:
        return
    with _lock:
        _owned[owner] = tuple(dict.fromkeys((*_owned.get(owner, ()), *found)))


def known_secrets() -> tuple[str, ...]:
    """Every secret remembered by an owner still alive, without repeats."""
    with _lock:
        held = list(_owned.values())
    return tuple(dict.fromkeys(value for values in held for value in values))


def scrub_record(
    record: logging.LogRecord, secrets: Iterable[str], mask: str = MASK
) -> logging.LogRecord:
    """Mask ``secrets`` (and token-like strings) in ``record``'s text, in place.

    The message is formatted with its arguments and, when that shows a secret, replaced by
    the masked text (``args`` then ``None``); the traceback is formatted into ``exc_text``
    and the stack masked likewise. A message that cannot be formatted is left to the
    handler, which reports it as usual.
    """
    secrets = tuple(secrets)
    try:
        message = record.getMessage()
    except Exception:  # a bad format string is the handler's to report
        message = None
    if message is not None:
        masked = redact_text(message, secrets, mask)
        if masked != message:
            record.msg, record.args = masked, None
    if record.exc_info and not record.exc_text:
        trace = logging.Formatter().formatException(record.exc_info)
        masked = redact_text(trace, secrets, mask)
        if masked != trace:  # else the handler's formatter shows the traceback its own way
            record.exc_text = masked
    elif record.exc_text:
        record.exc_text = redact_text(record.exc_text, secrets, mask)
    if record.stack_info:
        record.stack_info = redact_text(record.stack_info, secrets, mask)
    return record


def _covered(name: str | None) -> bool:
    return name is not None and any(name == t or name.startswith(f"{t}.") for t in TREES)


def install() -> None:
    """Scrub every record of the ``TREES`` loggers as it is made (once per process)."""
    global _installed
    with _lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def scrubbed(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            if _covered(record.name):
                try:
                    scrub_record(record, known_secrets())
                except Exception:  # logging never fails the caller
                    record.msg, record.args = _WITHHELD, None
                    record.exc_info = record.exc_text = record.stack_info = None
            return record

        logging.setLogRecordFactory(scrubbed)
        _installed = True
