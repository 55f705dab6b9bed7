"""Every log record toolpacks emits or relays is scrubbed of the secrets it knows.

A secret a host knows (a pack setting read from the environment, a secret-looking setting,
a value the command line was told to hide) is masked in records of the ``toolpacks`` logger
tree and of the MCP SDK's ``mcp`` tree, in whatever handler receives them (here pytest's, on
the root logger): in the message and its arguments, in encoded forms, in the traceback and
in the stack. Loggers created after the scrubbing was installed are covered too; records of
other libraries are left as they are.
"""

from __future__ import annotations

import base64
import gc
import io
import logging
from itertools import count
from typing import Any

import pytest

from toolpacks import Host, hookimpl
from toolpacks.core._logscrub import known_secrets, remember
from toolpacks.core._secrets import MASK

SECRET = "log-Secret-Value-5521"
ENCODED = base64.b64encode(SECRET.encode()).decode()
_fresh = count()


class Api:
    """A pack with one tool; its settings hold the secret."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        def ping() -> str:
            """Answers."""
            return "pong"

        register(ping)


@pytest.fixture
def host() -> Host:
    """A host whose pack reads its token from the environment (the pack is loaded)."""
    config = {"packs": {"api": {"token": {"env": "TP_LOG_TOKEN"}}}}
    made = Host(config, discover=False, environ={"TP_LOG_TOKEN": SECRET})
    made.add_pack(Api(), "api")
    made.toolset()
    return made


def fresh(tree: str) -> str:
    """A logger name under ``tree`` that no test used before (created after installing)."""
    return f"{tree}.fresh{next(_fresh)}" if tree else tree


@pytest.mark.parametrize("tree", ["toolpacks", "toolpacks.x", "mcp", "mcp.client"])
def test_a_configured_secret_is_masked_in_the_message_and_its_arguments(
    host: Host, caplog: pytest.LogCaptureFixture, tree: str
) -> None:
    """``toolpacks.x`` and ``mcp.client`` records: the secret, as is or encoded, is masked."""
    name = fresh(tree)
    with caplog.at_level(logging.DEBUG, logger=name):
        logging.getLogger(name).warning("token %s; header %s", SECRET, f"Basic {ENCODED}")
        logging.getLogger(name).info(f"inline {SECRET}")
    records = [r for r in caplog.records if r.name == name]
    assert len(records) == 2
    for record in records:
        assert MASK in record.getMessage()
    assert SECRET not in caplog.text
    assert ENCODED not in caplog.text


def test_the_exact_loggers_of_the_brief_are_scrubbed(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    """``logging.getLogger("toolpacks.x")`` and ``("mcp.client")`` by those very names."""
    for name in ("toolpacks.x", "mcp.client"):
        with caplog.at_level(logging.DEBUG, logger=name):
            logging.getLogger(name).error("secret=%s", SECRET)
    assert caplog.text.count(MASK) == 2
    assert SECRET not in caplog.text


@pytest.mark.parametrize("tree", ["toolpacks", "mcp"])
def test_a_secret_in_a_traceback_or_a_stack_is_masked(
    host: Host, caplog: pytest.LogCaptureFixture, tree: str
) -> None:
    """The exception's text (``exc_info``) and the stack (``stack_info``) are scrubbed too."""
    name = fresh(tree)
    logger = logging.getLogger(name)
    with caplog.at_level(logging.DEBUG, logger=name):
        try:
            raise RuntimeError(f"rejected {SECRET} ({ENCODED})")
        except RuntimeError:
            logger.exception("the call failed")
        logger.warning("here", stack_info=True, extra={"unused": SECRET})

        def deeper(token: str) -> None:
            logger.warning("deep", stack_info=True)  # the stack shows this line only

        deeper(SECRET)
    assert "RuntimeError: rejected" in caplog.text
    assert SECRET not in caplog.text
    assert ENCODED not in caplog.text
    (failed,) = [r for r in caplog.records if r.name == name and r.exc_info]
    assert failed.exc_text is not None
    assert MASK in failed.exc_text


def test_a_handler_formatting_the_record_itself_sees_no_secret(host: Host) -> None:
    """A handler with its own formatter (the application's), on the tree's parent, too."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    parent = logging.getLogger("mcp")
    parent.addHandler(handler)
    try:
        child = logging.getLogger(fresh("mcp.client.stdio"))
        child.setLevel(logging.DEBUG)
        try:
            raise ValueError(SECRET)
        except ValueError:
            child.error("server said %r", {"token": SECRET}, exc_info=True)
    finally:
        parent.removeHandler(handler)
    text = stream.getvalue()
    assert "server said" in text
    assert "ValueError" in text
    assert SECRET not in text


def test_token_shaped_strings_are_masked_without_any_host() -> None:
    """A token-like string (``ghp_...``) or a URL password is masked with no secret known."""
    stream = io.StringIO()
    logger = logging.getLogger(fresh("toolpacks"))
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    logger.propagate = False
    try:
        remember(object(), [])  # installs the scrubbing, knows nothing
        logger.warning("using %s at %s", "ghp_abcdefghij1234567890", "https://u:pa55word@h/x")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert "ghp_abcdefghij1234567890" not in text
    assert "pa55word" not in text


def test_records_without_secrets_keep_their_template_and_arguments(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    """Only a record that shows a secret is rewritten; others keep ``msg`` and ``args``."""
    name = fresh("toolpacks")
    with caplog.at_level(logging.DEBUG, logger=name):
        logging.getLogger(name).warning("%d tools from %s", 3, "api")
    (record,) = [r for r in caplog.records if r.name == name]
    assert (record.msg, record.args) == ("%d tools from %s", (3, "api"))


def test_records_of_other_libraries_are_left_alone(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    """The scrubbing covers toolpacks and the MCP SDK only (``mcpx`` is not ``mcp``)."""
    for name in ("someapp", "mcpx.client"):
        with caplog.at_level(logging.DEBUG, logger=name):
            logging.getLogger(name).warning("value %s", SECRET)
    assert [r.args for r in caplog.records] == [(SECRET,), (SECRET,)]


def test_a_message_that_cannot_be_formatted_does_not_break_logging(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    """A bad format string is left to the handler (which reports it), never raised."""
    name = fresh("toolpacks")
    with caplog.at_level(logging.DEBUG, logger=name):
        record = logging.getLogger(name).makeRecord(
            name, logging.WARNING, __file__, 1, "%d items", ("many",), None
        )
    assert record.msg == "%d items"


def test_secrets_are_held_as_long_as_their_owner() -> None:
    """A host's secrets are masked while it lives, and forgotten with it."""

    class Owner:
        pass

    owner = Owner()
    remember(owner, ["owned-secret-value-1", ""])
    assert "owned-secret-value-1" in known_secrets()
    del owner
    gc.collect()
    assert "owned-secret-value-1" not in known_secrets()


def test_the_command_lines_secrets_reach_relayed_records(caplog: pytest.LogCaptureFixture) -> None:
    """What a command hides (``LogRedactor.secrets``) is masked in the MCP SDK's records too."""
    from toolpacks.cli._logs import cli_logging

    name = fresh("mcp.client")
    with cli_logging() as redactor, caplog.at_level(logging.DEBUG, logger=name):
        redactor.secrets = ("cli-known-secret-77",)
        logging.getLogger(name).warning("arg cli-known-secret-77")
    assert "cli-known-secret-77" not in caplog.text
    assert MASK in caplog.text


def test_a_hosts_configuration_secrets_are_masked_in_every_log_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A secret of the configuration is masked in logs from the moment the host exists."""
    from toolpacks import Host

    secret = "sk-host-config-0123456789abcdef"
    config = {
        "mcp_servers": {"remote": {"command": "true", "env": {"API_TOKEN": secret}}},
        "agents": {"a": {"packs": []}},
    }
    host = Host(config, discover=False, environ={})
    with caplog.at_level(logging.INFO, logger="toolpacks"):
        logging.getLogger("toolpacks.anything").info("talking to it with %s", secret)
    text = "\n".join(record.getMessage() for record in caplog.records)
    assert "talking to it" in text
    assert secret not in text
    host.close()
