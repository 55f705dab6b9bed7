"""Log scrubbing's less-travelled branches (issue 36).

The stack of a record (``stack_info``) shows source lines, which can quote a secret; a record
relayed with its traceback already formatted (``exc_text``) carries the secret there; when
scrubbing itself fails the message must be withheld, never passed on in clear; and the HTTP
worker's own filter must mask its ``--token-env`` value even when it does not look like a
token (token-shaped strings are masked anyway, so only a plain word tells the filter works).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from itertools import count

import pytest

from toolpacks.core import _logscrub
from toolpacks.core._logscrub import remember, scrub_record
from toolpacks.core._secrets import MASK
from toolpacks.mcp.http import _worker

SECRET = "pin-Secret-Value-7731"
PLAIN = "hunter"  # a --token-env value that no token pattern would catch
_fresh = count()


class _Owner:
    """Holds the remembered secret for the length of a test."""


@pytest.fixture
def owner() -> Iterator[_Owner]:
    held = _Owner()
    remember(held, [SECRET])
    yield held
    del held


def _logger() -> logging.Logger:
    return logging.getLogger(f"toolpacks.pins{next(_fresh)}")


def test_a_secret_quoted_by_a_stack_line_is_masked(
    owner: _Owner, caplog: pytest.LogCaptureFixture
) -> None:
    """``stack_info`` shows this file's source, comment included, so it quotes the secret."""
    logger = _logger()
    with caplog.at_level(logging.DEBUG, logger=logger.name):
        logger.warning("look", stack_info=True)  # pin-Secret-Value-7731
    (record,) = [r for r in caplog.records if r.name == logger.name]
    assert record.stack_info is not None
    assert "look" in record.getMessage()
    assert SECRET not in record.stack_info
    assert MASK in record.stack_info


def test_a_pre_formatted_traceback_is_masked() -> None:
    """A relayed record arrives with ``exc_text`` already written: it is scrubbed too."""
    record = logging.makeLogRecord(
        {
            "name": "toolpacks.relay",
            "msg": "child failed",
            "exc_text": f"Traceback ...\nRuntimeError: token {SECRET} refused",
        }
    )
    scrub_record(record, (SECRET,))
    assert record.exc_text is not None
    assert SECRET not in record.exc_text
    assert "RuntimeError: token" in record.exc_text


def test_when_scrubbing_fails_the_message_is_withheld(
    owner: _Owner, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scrubber that raises never lets the record through in clear."""

    def broken(*args: object, **kwargs: object) -> logging.LogRecord:
        raise RuntimeError("the scrubber broke")

    monkeypatch.setattr(_logscrub, "scrub_record", broken)
    logger = _logger()
    with caplog.at_level(logging.DEBUG, logger=logger.name):
        try:
            raise ValueError(SECRET)
        except ValueError:
            logger.exception("failed with %s", SECRET, stack_info=True)
    (record,) = [r for r in caplog.records if r.name == logger.name]
    assert "withheld" in record.getMessage()
    assert SECRET not in caplog.text
    assert record.exc_info is None
    assert record.stack_info is None


def test_the_http_workers_filter_masks_a_plain_token_env_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker's stderr handler hides its token even when it is an ordinary word."""
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    root = logging.getLogger("toolpacks")
    before = list(root.handlers), root.level
    try:
        _worker._worker_logging(logging.INFO, (PLAIN,))
        logging.getLogger("toolpacks.mcp.http.pin").warning("rejected header %s", PLAIN)
    finally:
        for handler in root.handlers[:]:
            if handler not in before[0]:
                root.removeHandler(handler)
        root.setLevel(before[1])
    text = stream.getvalue()
    assert "rejected header" in text
    assert PLAIN not in text
    assert MASK in text
