"""JSON-RPC lines of the stdio transport: decoding one, the answers it gives itself, encoding.

A line becomes a message (a plain dict) for the server, or an answer the transport sends back
at once: a JSON-RPC error for what is not JSON (-32700) or not a JSON-RPC message (-32600),
and a tool error result for a ``tools/call`` whose arguments repeat a key. Duplicate keys can
only be seen in the text, so they are looked for here, cheaply: the keys of the parsed value
are counted and compared with the ``"<spaces>:`` sequences in the text (each key occurrence
ends with one); only when the counts differ is the text parsed again to find the duplicate.

A message of the plain shapes (a request, notification or response with nothing but its
JSON-RPC members, of the right types) is passed on as parsed. Anything else is judged by the
MCP types' own JSON-RPC models (``mcp_types``, imported then and only then), so a malformed
message gets the same error, in the same words, as before; without ``mcp_types`` installed
it gets a plainer -32600. Nothing here imports the MCP SDK.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic_core import from_json, to_json

from toolpacks.core._jsonargs import count_keys

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_REQUEST",
    "MAX_MESSAGE_BYTES",
    "PARSE_ERROR",
    "Answer",
    "DuplicateAnswer",
    "decode",
    "dump",
    "encode",
    "error_message",
    "id_in_use",
    "parse_body",
    "too_large",
]

MAX_MESSAGE_BYTES = 8 * 1024 * 1024
"""The largest message (one line, without its newline) the stdio server reads."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603

DuplicateAnswer = Callable[[str, str], dict[str, Any]]
"""Answers ``tools/call`` of the tool named first whose arguments repeat the key named second:
a ``CallToolResult`` dict, or an error (a dict with ``code`` and ``message``)."""

Message = dict[str, Any]
"""A JSON-RPC message, as parsed or to be sent."""

logger = logging.getLogger("toolpacks.mcp")
_BAD_ID = "Invalid Request: id: must be a string or an integer"
_BAD_TEXT_ID = "Invalid Request: id: must be valid Unicode text (it holds a lone surrogate)"
_SURROGATE = re.compile("[\ud800-\udfff]")
_KEY_END = re.compile(rb'"\s*:')
_Id = str | int | None
_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_NOTIFICATION_KEYS = frozenset({"jsonrpc", "method", "params"})
_RESULT_KEYS = frozenset({"jsonrpc", "id", "result"})
_ERROR_KEYS = frozenset({"jsonrpc", "id", "error"})


@dataclass(frozen=True, slots=True)
class Answer:
    """A response the transport sends back itself; the line is not passed on."""

    message: Message


@dataclass(frozen=True, slots=True)
class _Duplicate:
    key: str
    """The key seen twice."""
    holder: dict[str, Any]
    """The object that holds it (in the parsed value)."""


class _Malformed(Exception):
    """The line is not JSON (the message is the parser's)."""


def error_message(code: int, message: str, request_id: _Id = None) -> Message:
    """A JSON-RPC error response (``id`` null when the request's id could not be read)."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def id_in_use(request_id: str | int) -> Message:
    """The error for a request whose id is that of a request still in flight."""
    text = (
        f"request id {request_id!r} is already in use by a request in flight; JSON-RPC ids "
        "must be unique per session: send it again with a new id"
    )
    return error_message(INVALID_REQUEST, text, request_id)


def dump(value: Any) -> bytes:
    """Compact JSON text of ``value``; text that is not valid Unicode is escaped, not refused.

    (As the SDK's HTTP transport sends it: ``json.dumps`` escapes a lone surrogate.)
    """
    try:
        return to_json(value)
    except ValueError:  # a lone surrogate in some text: json escapes it as \\udXXX
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def too_large() -> Message:
    """The answer to a line longer than ``MAX_MESSAGE_BYTES``."""
    return error_message(
        INVALID_REQUEST,
        f"Invalid Request: request too large (the limit is {MAX_MESSAGE_BYTES} bytes a message)",
    )


def encode(message: Message) -> bytes:
    """One line of JSON; text that is not valid Unicode is replaced rather than refused."""
    try:
        return to_json(message)
    except ValueError:  # a lone surrogate in some text
        pass
    try:
        return json.dumps(message, ensure_ascii=False, allow_nan=False).encode("utf-8", "replace")
    except (TypeError, ValueError):
        logger.exception("toolpacks serve: a message could not be encoded as JSON")
    request_id = message.get("id") if "method" not in message else None
    text = "Internal error: the response could not be encoded as JSON"
    return to_json(error_message(INTERNAL_ERROR, text, _readable_id({"id": request_id})))


def decode(line: bytes, answer_duplicate: DuplicateAnswer) -> Message | Answer | None:
    """What to do with one line: a message for the server, an answer to send back, or nothing.

    Args:
        line: The line as received (its newline may be included).
        answer_duplicate: Builds the answer to a ``tools/call`` whose arguments repeat a key.

    Returns:
        ``None`` for a blank line; the message (a dict) to pass on; or, for a line that cannot
        be passed on, the ``Answer`` to send back.
    """
    if not line.strip():
        return None
    try:
        value, duplicates = _parse(line)
    except _Malformed as exc:
        return Answer(error_message(PARSE_ERROR, f"Parse error: {exc}"))
    if isinstance(value, dict) and _unencodable(value.get("id")):
        # An id no response could carry as sent: the client could never match the answer.
        return Answer(error_message(INVALID_REQUEST, _BAD_TEXT_ID))
    if duplicates:
        return Answer(_answer_duplicates(value, duplicates, answer_duplicate))
    if _plain(value):
        return value  # type: ignore[no-any-return]
    return _judged(value)


def _plain(value: Any) -> bool:
    """Whether ``value`` is a JSON-RPC message of a plain shape (nothing to judge)."""
    if type(value) is not dict or value.get("jsonrpc") != "2.0":
        return False
    keys = value.keys()
    if "method" in value:
        if type(value["method"]) is not str:
            return False
        params = value.get("params", {})
        if type(params) is not dict:
            return False
        if "id" not in value:
            return keys <= _NOTIFICATION_KEYS
        request_id = value["id"]
        return (type(request_id) is str or type(request_id) is int) and keys <= _REQUEST_KEYS
    request_id = value.get("id")
    if type(request_id) is not str and type(request_id) is not int:
        return False
    if "result" in value:
        return type(value["result"]) is dict and keys <= _RESULT_KEYS
    return type(value.get("error")) is dict and keys <= _ERROR_KEYS and _plain_error(value["error"])


def _plain_error(error: dict[str, Any]) -> bool:
    return type(error.get("code")) is int and type(error.get("message")) is str


def _judged(value: Any) -> Message | Answer:
    """Pass on or refuse a message that is not of a plain shape, as the MCP types judge it."""
    try:
        import mcp_types
        from pydantic import ValidationError
    except ImportError:  # the MCP types are not installed: a plainer refusal
        return Answer(error_message(INVALID_REQUEST, _PLAIN_INVALID, _readable_id(value)))
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        return Answer(error_message(INVALID_REQUEST, _invalid(value), _readable_id(value)))
    if isinstance(message, mcp_types.JSONRPCNotification) and "id" in value:
        # Not a notification: its id is there but is neither a string nor an integer.
        return Answer(error_message(INVALID_REQUEST, _BAD_ID))
    return message.model_dump(by_alias=True, mode="json", exclude_unset=True)


_PLAIN_INVALID = "Invalid Request: not a JSON-RPC 2.0 message"


def _invalid(value: Any) -> str:
    """Why ``value`` is not a JSON-RPC message, judged against the kind it looks like."""
    import mcp_types
    from pydantic import ValidationError

    shapes: dict[str, type[Any]] = {
        "result": mcp_types.JSONRPCResponse,
        "error": mcp_types.JSONRPCError,
    }
    if not isinstance(value, dict):
        return f"Invalid Request: a message is a JSON object, not {_json_type(value)}"
    if "method" in value:
        model: type[Any] = (
            mcp_types.JSONRPCRequest if "id" in value else mcp_types.JSONRPCNotification
        )
    else:
        model = next((m for k, m in shapes.items() if k in value), type(None))
    if model is type(None):
        return "Invalid Request: a message needs a method (a request), or a result or an error"
    try:
        model.model_validate(value, by_name=False)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "message"
        return f"Invalid Request: {where}: {first['msg']}"
    return "Invalid Request: not a JSON-RPC 2.0 message"


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return "a number"


def parse_body(body: bytes) -> Any:
    """The parsed JSON of ``body`` when it is JSON without repeated keys; else None.

    The fast path of ``decode_line`` alone, for a caller that answers plain requests itself
    and passes everything else (``None``) on to ``decode_line``.
    """
    try:
        value = from_json(body)
    except ValueError:
        return None
    key_ends = len(_KEY_END.findall(body))
    if key_ends == 0 or count_keys(value) == key_ends:
        return value
    return None


def _parse(line: bytes) -> tuple[Any, list[_Duplicate]]:
    """The parsed value and the duplicate keys in it (none, most of the time, found fast)."""
    try:
        value = from_json(line)
    except ValueError as exc:
        return _parse_slow(line, str(exc))  # lone surrogate escapes: json accepts them
    key_ends = len(_KEY_END.findall(line))
    if key_ends == 0 or count_keys(value) == key_ends:
        return value, []
    return _parse_slow(line, None)


def _parse_slow(line: bytes, first_error: str | None) -> tuple[Any, list[_Duplicate]]:
    """Parse with ``json`` and note every object that repeats a key."""
    duplicates: list[_Duplicate] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
            duplicates.append(_Duplicate(key, obj))
        return obj

    try:
        value = json.loads(line, object_pairs_hook=pairs_hook)
    except RecursionError:
        raise _Malformed("the message is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, too many digits
        raise _Malformed(first_error or str(exc)) from None
    return value, duplicates


def _unencodable(request_id: Any) -> bool:
    """Whether ``request_id`` is text holding a lone surrogate (not valid Unicode)."""
    return (
        isinstance(request_id, str)
        and not request_id.isascii()
        and _SURROGATE.search(request_id) is not None
    )


def _readable_id(value: Any) -> _Id:
    """The message's id when it is one JSON-RPC allows (a string or an integer), else None."""
    if not isinstance(value, dict):
        return None
    request_id = value.get("id")
    if isinstance(request_id, str) or type(request_id) is int:
        return request_id
    return None


def _answer_duplicates(
    value: Any, duplicates: list[_Duplicate], answer_duplicate: DuplicateAnswer
) -> Message:
    """A tool error result when only ``tools/call`` arguments repeat keys; else -32600."""
    request_id = _readable_id(value)
    call = _tools_call(value)
    if call is not None and request_id is not None:
        name, arguments = call
        inside = _object_ids(arguments)
        if all(id(d.holder) in inside for d in duplicates):
            answer = answer_duplicate(name, duplicates[0].key)
            if "code" in answer:
                return {"jsonrpc": "2.0", "id": request_id, "error": answer}
            return {"jsonrpc": "2.0", "id": request_id, "result": answer}
    # A repeat outside the arguments names the refusal; with none (the arguments repeat a
    # key but the id is no JSON-RPC id, so there is no call to answer), the first one does.
    outside = next(
        (d for d in duplicates if call is None or id(d.holder) not in _object_ids(call[1])),
        duplicates[0],
    )
    return error_message(
        INVALID_REQUEST,
        f"Invalid Request: duplicate key {outside.key!r} in the message; send each key once",
        request_id,
    )


def _tools_call(value: Any) -> tuple[str, dict[str, Any]] | None:
    """The tool name and arguments object of a well-formed ``tools/call`` request, or None."""
    if not isinstance(value, dict) or value.get("method") != "tools/call":
        return None
    if value.get("jsonrpc") != "2.0":
        return None
    params = value.get("params")
    if not isinstance(params, dict):
        return None
    name, arguments = params.get("name"), params.get("arguments")
    if isinstance(name, str) and isinstance(arguments, dict):
        return name, arguments
    return None


def _object_ids(value: Any) -> set[int]:
    """The ``id()`` of every object in ``value``, itself included."""
    found: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            found.add(id(item))
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
    return found
