"""Validation errors of a configuration, one line per key, in the configuration's own terms.

pydantic locates an error by model fields and union members; a person reads keys
(``agents.r.packs[0]``). Unknown keys list the keys their table allows; a value shown in a
message is hidden whole under a secret-looking key, since the value alone lost its key.
"""

from __future__ import annotations

import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from toolpacks.core._secrets import REDACTED, is_secret_key, redact

__all__ = ["format_errors"]


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _locate(
    loc: tuple[int | str, ...], root: type[BaseModel]
) -> tuple[str, list[str] | None, bool]:
    """Render an error location as a key (``agents.r.packs[0]``).

    Returns:
        The key, the keys allowed in the table holding its last part (None when the table
        is free-form), and whether the location ended inside a union (pydantic adds the
        member's type name, which is dropped from the key).
    """
    key = ""
    current: Any = root
    allowed: list[str] | None = None
    in_union = False
    for part in loc:
        if _is_model(current):
            fields = current.model_fields
            allowed = sorted(fields)
            key = f"{key}.{part}" if key else str(part)
            current = fields[part].annotation if part in fields else None
            continue
        origin = get_origin(current)
        if origin in (Union, types.UnionType):
            in_union = True
            members = {
                getattr(m, "__name__", None) if get_origin(m) is None else None: m
                for m in get_args(current)
            }
            current = members.get(str(part))
            continue
        allowed = None
        if isinstance(part, int):
            key = f"{key}[{part}]"
            current = get_args(current)[0] if origin is list else None
        else:
            key = f"{key}.{part}" if key else str(part)
            current = get_args(current)[1] if origin is dict else None
    return key or "(top level)", allowed, in_union


def _shown(value: Any, key: str = "") -> str:
    """``value`` for an error message about ``key``: hidden whole under a secret-looking key.

    The value alone has lost its key (``['...']`` of ``env.api_token``), so the key path
    decides: a secret-looking part, or an MCP server's ``env``/``headers`` table.
    """
    parts = [part for part in key.replace("[", ".").replace("]", "").split(".") if part]
    server_table = len(parts) > 2 and parts[0] == "mcp_servers" and parts[2] in ("env", "headers")
    hidden = server_table or any(is_secret_key(part) for part in parts)
    text = repr(REDACTED if hidden else redact(value))
    return text if len(text) <= 60 else text[:57] + "..."


def format_errors(source: str, exc: ValidationError, root: type[BaseModel]) -> str:
    """``exc``'s errors, one line per key of ``root`` (the whole configuration's model)."""
    lines = [f"{source}: invalid configuration"]
    unions: dict[str, list[str]] = {}
    union_inputs: dict[str, Any] = {}
    for err in exc.errors(include_url=False):
        key, allowed, in_union = _locate(tuple(err["loc"]), root)
        if err["type"] == "extra_forbidden":
            hint = f"; allowed keys: {', '.join(allowed)}" if allowed else ""
            lines.append(f"  {key}: unknown key{hint}")
        elif in_union:
            unions.setdefault(key, []).append(str(err["loc"][-1]))
            union_inputs[key] = err.get("input")
        else:
            lines.append(f"  {key}: {err['msg'].removeprefix('Value error, ')}")
    for key, kinds in unions.items():
        expected = " or ".join(dict.fromkeys(kinds))
        lines.append(f"  {key}: expected {expected}, got {_shown(union_inputs[key], key)}")
    return "\n".join(lines)
