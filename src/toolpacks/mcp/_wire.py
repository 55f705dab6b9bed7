"""JSON-RPC lines of the stdio transport: decoding one, the answers it gives itself, encoding.

A line becomes a message for the SDK's server, or an answer the transport sends back at once:
a JSON-RPC error for what is not JSON (-32700) or not a JSON-RPC message (-32600), and a tool
error result for a ``tools/call`` whose arguments repeat a key. Duplicate keys can only be
seen in the text, so they are looked for here, cheaply: the keys of the parsed value are
counted and compared with the ``"<spaces>:`` sequences in the text (each key occurrence ends
with one); only when the counts differ is the text parsed again to find the duplicate.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types
from pydantic import ValidationError
from pydantic_core import from_json

from toolpacks.core._jsonargs import count_keys

__all__ = [
    "MAX_MESSAGE_BYTES",
    "Answer",
    "DuplicateAnswer",
    "decode_line",
    "encode",
    "error_message",
    "parse_body",
    "too_large",
]

MAX_MESSAGE_BYTES = 8 * 1024 * 1024
"""The largest message (one line, without its newline) the stdio server reads."""

DuplicateAnswer = Callable[[str, str], "mcp_types.CallToolResult | mcp_types.ErrorData"]
"""Answers ``tools/call`` of the tool named first whose arguments repeat the key named second."""

logger = logging.getLogger("toolpacks.mcp")
_BAD_ID = "Invalid Request: id: must be a string or an integer"
_BAD_TEXT_ID = "Invalid Request: id: must be valid Unicode text (it holds a lone surrogate)"
_SURROGATE = re.compile("[\ud800-\udfff]")
_KEY_END = re.compile(rb'"\s*:')
_Id = str | int | None


@dataclass(frozen=True, slots=True)
class Answer:
    """A response the transport sends back itself; the line is not passed on."""

    message: mcp_types.JSONRPCError | mcp_types.JSONRPCResponse


@dataclass(frozen=True, slots=True)
class _Duplicate:
    key: str
    """The key seen twice."""
    holder: dict[str, Any]
    """The object that holds it (in the parsed value)."""


class _Malformed(Exception):
    """The line is not JSON (the message is the parser's)."""


def error_message(code: int, message: str, request_id: _Id = None) -> mcp_types.JSONRPCError:
    """A JSON-RPC error response (``id`` null when the request's id could not be read)."""
    error = mcp_types.ErrorData(code=code, message=message)
    return mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


def too_large() -> mcp_types.JSONRPCError:
    """The answer to a line longer than ``MAX_MESSAGE_BYTES``."""
    return error_message(
        mcp_types.INVALID_REQUEST,
        f"Invalid Request: request too large (the limit is {MAX_MESSAGE_BYTES} bytes a message)",
    )


def encode(message: mcp_types.JSONRPCMessage) -> bytes:
    """One line of JSON; text that is not valid Unicode is replaced rather than refused."""
    adapter = mcp_types.jsonrpc_message_adapter
    try:
        return adapter.dump_json(message, by_alias=True, exclude_unset=True)
    except ValueError:  # a lone surrogate in some text
        pass
    try:
        plain = message.model_dump(by_alias=True, exclude_unset=True)
        return json.dumps(plain, ensure_ascii=False, allow_nan=False).encode("utf-8", "replace")
    except (TypeError, ValueError):
        logger.exception("toolpacks serve: a message could not be encoded as JSON")
    request_id = getattr(message, "id", None)
    if isinstance(message, mcp_types.JSONRPCRequest | mcp_types.JSONRPCNotification):
        request_id = None  # not a response: say so, uncorrelated
    text = "Internal error: the response could not be encoded as JSON"
    answer = error_message(mcp_types.INTERNAL_ERROR, text, request_id)
    return adapter.dump_json(answer, by_alias=True, exclude_unset=True)


def decode_line(
    line: bytes, answer_duplicate: DuplicateAnswer
) -> mcp_types.JSONRPCMessage | Answer | None:
    """What to do with one line: a message for the server, an answer to send back, or nothing.

    Args:
        line: The line as received (its newline may be included).
        answer_duplicate: Builds the answer to a ``tools/call`` whose arguments repeat a key.

    Returns:
        ``None`` for a blank line; a ``JSONRPCMessage`` to pass on; or, for a line that cannot
        be passed on, the ``Answer`` to send back.
    """
    if not line.strip():
        return None
    try:
        value, duplicates = _parse(line)
    except _Malformed as exc:
        return Answer(error_message(mcp_types.PARSE_ERROR, f"Parse error: {exc}"))
    if isinstance(value, dict) and _unencodable(value.get("id")):
        # An id no response could carry as sent: the client could never match the answer.
        return Answer(error_message(mcp_types.INVALID_REQUEST, _BAD_TEXT_ID))
    if duplicates:
        return Answer(_answer_duplicates(value, duplicates, answer_duplicate))
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        return Answer(
            error_message(mcp_types.INVALID_REQUEST, _invalid(value), _readable_id(value))
        )
    if isinstance(message, mcp_types.JSONRPCNotification) and "id" in value:
        # Not a notification: its id is there but is neither a string nor an integer.
        return Answer(error_message(mcp_types.INVALID_REQUEST, _BAD_ID))
    return message


_SHAPES: dict[str, type[Any]] = {
    "result": mcp_types.JSONRPCResponse,
    "error": mcp_types.JSONRPCError,
}


def _invalid(value: Any) -> str:
    """Why ``value`` is not a JSON-RPC message, judged against the kind it looks like."""
    if not isinstance(value, dict):
        return f"Invalid Request: a message is a JSON object, not {_json_type(value)}"
    if "method" in value:
        model: type[Any] = (
            mcp_types.JSONRPCRequest if "id" in value else mcp_types.JSONRPCNotification
        )
    else:
        model = next((m for k, m in _SHAPES.items() if k in value), type(None))
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
) -> mcp_types.JSONRPCError | mcp_types.JSONRPCResponse:
    """A tool error result when only ``tools/call`` arguments repeat keys; else -32600."""
    request_id = _readable_id(value)
    call = _tools_call(value)
    if call is not None and request_id is not None:
        name, arguments = call
        inside = _object_ids(arguments)
        if all(id(d.holder) in inside for d in duplicates):
            answer = answer_duplicate(name, duplicates[0].key)
            if isinstance(answer, mcp_types.ErrorData):
                return mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=answer)
            result = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
            return mcp_types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
    outside = next(
        d for d in duplicates if call is None or id(d.holder) not in _object_ids(call[1])
    )
    return error_message(
        mcp_types.INVALID_REQUEST,
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
