"""Reading a TOOL.md: its YAML front matter, checked key by key, and its Markdown body.

Everything the front matter says is checked before any code runs, and every mistake is
reported at once (an unknown key is a typo until proven otherwise), so one pass over the
problems list fixes a TOOL.md.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from toolpacks.core.define._traits import ToolHints

__all__ = ["CONTEXT_PARAM", "FrontMatter", "FrontMatterError", "parse_tool_md"]

CONTEXT_PARAM = "toolpacks_context"
"""The adapter parameter that receives the ``ToolContext`` (so no tool parameter may use it)."""

_TOP_KEYS = (
    "name",
    "description",
    "tags",
    "parameters",
    "permissions",
    "title",
    "timeout",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "credentials",
    "scopes",
)
_HINT_KEYS = ("read_only", "destructive", "idempotent", "open_world")
_PARAM_KEYS = ("type", "description", "required", "enum", "default", "items")
_PERMISSION_KEYS = ("allowed_agents", "require_approval")
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}
_MAX_PARAM_NAME = 64
_PARAM_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")  # what every provider accepts as a property


class FrontMatterError(ValueError):
    """A TOOL.md cannot become a tool; ``messages`` lists every reason (without the path)."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """What a valid TOOL.md declares."""

    name: str | None
    """The ``name`` key (None: the directory name is used)."""
    description: str | None
    """The ``description`` key (None when missing or blank)."""
    input_schema: dict[str, Any]
    """The JSON Schema built from ``parameters``."""
    instructions: str | None
    """The Markdown body, stripped (None when empty)."""
    tags: tuple[str, ...] = ()
    """The ``tags`` key."""
    allowed_agents: tuple[str, ...] | None = None
    """``permissions.allowed_agents`` (None: every agent)."""
    require_approval: bool = False
    """``permissions.require_approval``."""
    title: str | None = None
    """A human-readable title."""
    timeout: float | None = None
    """Seconds a run may take."""
    hints: ToolHints = field(default_factory=ToolHints)
    """The behaviour hints it states (``read_only``, ``destructive``, ...)."""
    credentials: tuple[str, ...] = ()
    """The per-user credentials its handler reads (``context.credential(name)``)."""
    scopes: tuple[str, ...] = ()
    """Scopes a call's principal needs (``scopes: [repo.write]``)."""


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (YAML keeps the last)."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node)
        try:
            duplicate = key in seen
            seen.add(key)
        except TypeError:
            continue  # an unhashable key: construct_mapping reports it
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"the key {key!r} is given twice", key_node.start_mark
            )
    return loader.construct_mapping(node)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _split(text: str) -> tuple[str, str]:
    """The front matter text and the body; raises when the ``---`` fences are missing."""
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError(
            [
                "missing front matter: TOOL.md must start with a line '---', then YAML "
                "(name, description, parameters, ...), then a line '---'"
            ]
        )
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise FrontMatterError(
        ["the front matter is not closed: add a line '---' after the YAML block"]
    )


def _load_yaml(source: str) -> Any:
    try:
        return yaml.load(source, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 2}" if mark is not None else ""
        what = exc.problem or exc.context or "unreadable YAML"
        raise FrontMatterError([f"invalid YAML in the front matter{where}: {what}"]) from None
    except yaml.YAMLError as exc:
        raise FrontMatterError([f"invalid YAML in the front matter: {exc}"]) from None


def _unknown(key: object, allowed: tuple[str, ...], where: str) -> str:
    hint = ""
    if isinstance(key, str):
        if where == "front matter" and key in _PERMISSION_KEYS:
            hint = f"; did you mean permissions.{key}?"
        else:
            close = difflib.get_close_matches(key, allowed, n=1)
            if close:
                hint = f"; did you mean {close[0]!r}?"
    return f"unknown key {key!r} in the {where}{hint} (allowed: {', '.join(allowed)})"


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _matches(kind: str, value: object) -> bool:
    if isinstance(value, bool) and kind != "boolean":
        return False
    return isinstance(value, _TYPES[kind])


def _strings(value: object, label: str, problems: list[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    problems.append(f"{label} must be a list of strings, got {_type_name(value)} {value!r}")
    return ()


def _parameter(name: object, spec: object, problems: list[str]) -> tuple[str, dict[str, Any], bool]:
    """One parameter's schema and whether it is required; problems are appended."""
    label = f"parameters.{name}"
    if not isinstance(name, str) or not 1 <= len(name) <= _MAX_PARAM_NAME:
        problems.append(f"parameter name {name!r} must be a string of 1-64 characters")
        return "", {}, False
    if not _PARAM_NAME.match(name):
        problems.append(f"parameter name {name!r} may use only letters, digits, '_', '.' and '-'")
    if name == CONTEXT_PARAM:
        problems.append(f"parameter name {name!r} is reserved for the ToolContext; rename it")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        problems.append(
            f"{label} must be a mapping (type, description, required, enum, default), got "
            f"{_type_name(spec)} {spec!r}"
        )
        return name, {}, False
    problems.extend(_unknown(key, _PARAM_KEYS, label) for key in spec if key not in _PARAM_KEYS)
    kind = spec.get("type", "string")
    if kind not in _TYPES:
        problems.append(
            f"{label}.type: unknown parameter type {kind!r}; use one of: {', '.join(_TYPES)}"
        )
        return name, {}, False
    prop: dict[str, Any] = {"type": kind}
    description = spec.get("description")
    if description is not None:
        if isinstance(description, str):
            if description.strip():
                prop["description"] = description.strip()
        else:
            problems.append(f"{label}.description must be a string, got {_type_name(description)}")
    required = spec.get("required", False)
    if not isinstance(required, bool):
        problems.append(f"{label}.required must be true or false, got {required!r}")
    if "items" in spec:
        items = spec["items"]
        if kind != "array":
            problems.append(f"{label}.items applies only to type array (this one is {kind})")
        elif not isinstance(items, dict) or items.get("type", "string") not in _TYPES:
            problems.append(
                f"{label}.items must be a JSON Schema mapping such as {{type: string}} (types: "
                f"{', '.join(_TYPES)}), got {items!r}"
            )
        else:
            prop["items"] = items
    if "enum" in spec:
        prop["enum"] = spec["enum"]
        _check_enum(label, kind, spec["enum"], problems)
    if "default" in spec:
        prop["default"] = spec["default"]
        if required is True:
            problems.append(f"{label}: a required parameter cannot have a default; drop one")
        _check_default(label, kind, spec["default"], prop.get("enum"), problems)
    return name, prop, required is True


def _check_enum(label: str, kind: str, enum: object, problems: list[str]) -> None:
    if not isinstance(enum, list) or not enum:
        problems.append(f"{label}.enum must be a non-empty list, got {enum!r}")
        return
    for value in enum:
        if not isinstance(value, str | int):
            problems.append(
                f"{label}.enum: {value!r} is not allowed; enum values must be strings, "
                "integers or booleans"
            )
        elif not _matches(kind, value):
            problems.append(
                f"{label}.enum: {value!r} ({_type_name(value)}) does not match the parameter "
                f"type {kind}"
            )
    if len({json.dumps(v, default=repr) for v in enum}) < len(enum):
        problems.append(f"{label}.enum lists a value twice")


def _check_default(
    label: str, kind: str, default: object, enum: object, problems: list[str]
) -> None:
    if not _matches(kind, default):
        problems.append(
            f"{label}.default: {default!r} ({_type_name(default)}) does not match the "
            f"parameter type {kind}"
        )
    elif isinstance(enum, list) and default not in enum:
        problems.append(f"{label}.default: {default!r} is not one of the enum values")
    else:
        try:
            json.dumps(default)
        except (TypeError, ValueError):
            problems.append(f"{label}.default: {default!r} is not JSON data")


def _schema(parameters: object, problems: list[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, dict):
        problems.append(
            "parameters must be a mapping of parameter names to their settings, got "
            f"{_type_name(parameters)}"
        )
        parameters = {}
    for name, spec in parameters.items():
        key, prop, is_required = _parameter(name, spec, problems)
        if key:
            properties[key] = prop
        if is_required:
            required.append(key)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _permissions(value: object, problems: list[str]) -> tuple[tuple[str, ...] | None, bool]:
    if value is None:
        return None, False
    if not isinstance(value, dict):
        problems.append(
            f"permissions must be a mapping (allowed_agents, require_approval), got "
            f"{_type_name(value)}"
        )
        return None, False
    unknown = [key for key in value if key not in _PERMISSION_KEYS]
    problems.extend(_unknown(key, _PERMISSION_KEYS, "permissions") for key in unknown)
    agents = value.get("allowed_agents")
    allowed = None if agents is None else _strings(agents, "permissions.allowed_agents", problems)
    approval = value.get("require_approval", False)
    if not isinstance(approval, bool):
        problems.append(f"permissions.require_approval must be true or false, got {approval!r}")
    return allowed, approval is True


def _optional_str(data: Mapping[str, Any], key: str, problems: list[str]) -> str | None:
    """``data[key]`` stripped; None when missing or blank."""
    value = data.get(key)
    if isinstance(value, str):
        return value.strip() or None
    if value is not None:
        problems.append(f"{key} must be a string, got {_type_name(value)} {value!r}")
    return None


def parse_tool_md(text: str) -> FrontMatter:
    """Check a TOOL.md text and return what it declares.

    Raises:
        FrontMatterError: Anything is wrong; ``messages`` has every problem found.
    """
    source, body = _split(text)
    data = _load_yaml(source)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError(
            [
                f"the front matter must be a mapping of keys (name, description, ...), got "
                f"{_type_name(data)}"
            ]
        )
    problems = [_unknown(key, _TOP_KEYS, "front matter") for key in data if key not in _TOP_KEYS]
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        problems.append(f"name must be a string, got {_type_name(name)} {name!r}")
        name = None
    description = _optional_str(data, "description", problems)
    title = _optional_str(data, "title", problems)
    tags = _strings(data["tags"], "tags", problems) if data.get("tags") is not None else ()
    wanted = data.get("credentials")
    credentials = _strings(wanted, "credentials", problems) if wanted is not None else ()
    scopes = _strings(data["scopes"], "scopes", problems) if data.get("scopes") is not None else ()
    schema = _schema(data.get("parameters"), problems)
    allowed, approval = _permissions(data.get("permissions"), problems)
    timeout = data.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        problems.append(f"timeout must be a positive number of seconds, got {timeout!r}")
        timeout = None
    hints: dict[str, bool] = {}
    for key in _HINT_KEYS:
        if key in data:
            if isinstance(data[key], bool):
                hints[key] = data[key]
            else:
                problems.append(f"{key} must be true or false, got {data[key]!r}")
    if problems:
        raise FrontMatterError(problems)
    return FrontMatter(
        name=name,
        description=description,
        input_schema=schema,
        instructions=body.strip() or None,
        tags=tags,
        allowed_agents=allowed,
        require_approval=approval,
        title=title,
        timeout=None if timeout is None else float(timeout),
        hints=ToolHints(**hints),
        credentials=credentials,
        scopes=scopes,
    )
