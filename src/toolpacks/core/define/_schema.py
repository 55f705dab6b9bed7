"""From a typed signature to a validator and a JSON Schema, built once at definition time.

The arguments of a tool are validated as a typed dict of its parameters: validation returns a
plain dict of keyword arguments (nested models become model instances) that is passed straight
to the function. The JSON Schema comes from the same core schema, with pydantic's titles removed
and the signature's defaults and descriptions added. The core schema is made field by field by
pydantic's own generator, as pydantic-ai does, which skips making and inspecting a ``TypedDict``
(half the definition of a small tool); with another pydantic, by a ``TypeAdapter`` of one.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import (
    Annotated,
    Any,
    ClassVar,
    Literal,
    NotRequired,
    Required,
    Union,
    get_args,
    get_origin,
)

from pydantic import ConfigDict, PydanticSchemaGenerationError, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import (
    CoreSchema,
    PydanticSerializationError,
    SchemaError,
    SchemaValidator,
    core_schema,
    to_jsonable_python,
)
from typing_extensions import TypedDict

from toolpacks.core._context import ToolContext
from toolpacks.core.define._docstrings import parse_docstring
from toolpacks.core.define._hints import fn_label, reason, type_hints, unwrap_partial
from toolpacks.core.define._jsonschema import drop_titles
from toolpacks.exceptions import ToolDefinitionError

__all__ = ["ExtraArgs", "Signature", "analyze", "docstring_of"]

ExtraArgs = Literal["reject", "ignore"]
"""What to do with arguments a tool does not declare: refuse the call, or drop them."""

_SKIP_FIRST = ("self", "cls")


@dataclass(frozen=True, slots=True)
class Signature:
    """What toolpacks learned from a function's signature."""

    params: tuple[str, ...]
    """Names of the parameters a caller supplies (those in the input schema)."""
    required: frozenset[str]
    """The parameters without a default."""
    validator: SchemaValidator
    """Validates a dict of arguments into the keyword arguments of the function."""
    input_schema: dict[str, Any]
    """The JSON Schema of the arguments."""
    context_param: str | None
    """The parameter that receives the ``ToolContext``, if any."""
    var_keyword: bool
    """Whether the function takes ``**kwargs`` (extra arguments are then passed through)."""
    return_annotation: Any
    """The declared return type (the item type for generators); ``inspect.Parameter.empty``
    when there is none."""
    param_descriptions: dict[str, str]
    """Parameter descriptions as they appear in the schema."""
    description: str
    """The docstring without its parameter section."""
    skips_first: bool
    """Whether the first parameter is ``self``/``cls`` (a method defined in a class body)."""
    arguments_core: Any = None
    """The core schema ``validator`` was built from (the gate compiles its checks into a
    second validator of it on the first call, ``core.call._gate_compiled``)."""

    @property
    def adapter(self) -> SchemaValidator:
        """The validator, under its earlier name."""
        return self.validator


def _is_context(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_context(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return any(_is_context(a) for a in get_args(annotation) if a is not type(None))
    return False


def _split_annotated(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    if get_origin(annotation) is Annotated:
        base, *meta = get_args(annotation)
        return base, tuple(meta)
    return annotation, ()


def docstring_of(fn: Callable[..., Any]) -> str | None:
    """The cleaned docstring that describes ``fn`` (a partial's function's), if any."""
    if inspect.isclass(fn):
        return None
    return inspect.getdoc(unwrap_partial(fn))


def _jsonable_default(value: Any) -> tuple[bool, Any]:
    try:
        return True, to_jsonable_python(value)
    except (PydanticSerializationError, TypeError, ValueError):
        return False, None


_DEFAULT_CONTEXT_NAME = "tool_context"
"""The parameter ``context=True`` injects into when none is annotated ``ToolContext``."""


def _context_name(
    label: str,
    context: str | bool | None,
    parameters: list[inspect.Parameter],
    hints: dict[str, Any],
) -> str | None:
    """The name ``context=`` gives the context parameter (None: found by its annotation).

    ``True`` asks for a context without naming the parameter: the one annotated
    ``ToolContext``, else the one named ``tool_context``. ``False`` is the default.
    """
    if context is None or context is False:
        return None
    if context is True:
        if any(_is_context(hints.get(p.name)) for p in parameters):
            return None
        if any(p.name == _DEFAULT_CONTEXT_NAME for p in parameters):
            return _DEFAULT_CONTEXT_NAME
        raise ToolDefinitionError(
            f"tool function {label!r}: context=True but the function has no parameter to "
            f"receive the ToolContext; add a parameter `{_DEFAULT_CONTEXT_NAME}: ToolContext` "
            "(or annotate an existing one with ToolContext)"
        )
    if not isinstance(context, str):
        raise ToolDefinitionError(
            f"tool function {label!r}: context={context!r}; pass the name of the parameter "
            "that receives the ToolContext, or True"
        )
    return context


def analyze(
    fn: Callable[..., Any],
    *,
    exclude: frozenset[str] = frozenset(),
    extra_args: ExtraArgs = "reject",
    strict: bool = False,
    context: str | bool | None = None,
    is_generator: bool = False,
) -> Signature:
    """Analyze ``fn`` into a :class:`Signature`, failing fast on anything unusable.

    Args:
        fn: The function (or bound method, or callable object).
        exclude: Parameters filled by toolpacks rather than the caller (fixed kwargs).
        extra_args: What the validator does with undeclared arguments.
        strict: Validate in pydantic strict mode (no coercion).
        context: The name of the parameter that receives the ``ToolContext``, when it is not
            found by its annotation; ``True`` for the annotated one or ``tool_context``.
        is_generator: Whether ``fn`` is a (sync or async) generator function; generators may
            omit their return annotation.

    Raises:
        ToolDefinitionError: A parameter lacks a type hint or has a type with no JSON Schema,
            the return annotation is missing, or the context parameter is misused.
    """
    label = fn_label(fn)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"tool function {label!r}: no signature ({exc})") from exc
    hints = type_hints(fn)
    doc = parse_docstring(docstring_of(fn), cleaned=True)
    fields: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    str_descriptions: dict[str, str] = {}
    context_param: str | None = None
    var_keyword = False
    extras: Any = None
    skips_first = False
    parameters = list(sig.parameters.values())
    context = _context_name(label, context, parameters, hints)
    if context is not None:
        if not context:
            raise ToolDefinitionError(
                f"tool function {label!r}: context='' names no parameter; "
                "pass the parameter's name or annotate it with ToolContext"
            )
        if context not in sig.parameters:
            raise ToolDefinitionError(
                f"tool function {label!r}: context={context!r} but the function has no "
                f"parameter {context!r}; add `{context}: ToolContext` to its signature"
            )
    for index, param in enumerate(parameters):
        name = param.name
        if index == 0 and name in _SKIP_FIRST and name not in hints:
            skips_first = True
            continue
        annotation = hints.get(name, inspect.Parameter.empty)
        if name == context or (
            annotation is not inspect.Parameter.empty and _is_context(annotation)
        ):
            if context_param is not None:
                raise ToolDefinitionError(
                    f"tool function {label!r}: parameters {context_param!r} and {name!r} both "
                    "ask for the ToolContext; keep one"
                )
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
                raise ToolDefinitionError(
                    f"tool function {label!r}: context parameter {name!r} must be an ordinary "
                    f"parameter, e.g. `{name}: ToolContext`"
                )
            if annotation is not inspect.Parameter.empty and not _is_context(annotation):
                raise ToolDefinitionError(
                    f"tool function {label!r}: context parameter {name!r} is annotated "
                    f"{annotation!r}; annotate it `{name}: ToolContext`"
                )
            context_param = name
            continue
        if name in exclude:
            continue
        if param.kind is param.VAR_POSITIONAL:
            raise ToolDefinitionError(
                f"tool function {label!r}: parameter '*{name}' cannot be passed by name; "
                "replace it with a list parameter, e.g. `items: list[str]`"
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"tool function {label!r}: parameter {name!r} is positional-only; tools are "
                "called with named arguments, so remove the '/' from the signature"
            )
        if annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(
                f"tool function {label!r}: parameter {name!r} has no type hint; annotate it, "
                f"e.g. `{name}: str`"
            )
        if param.kind is param.VAR_KEYWORD:
            var_keyword = True
            extras = _extras_type(annotation)
            continue
        _, meta = _split_annotated(annotation)
        for item in meta:
            if isinstance(item, str):
                str_descriptions[name] = item
                break
        if param.default is inspect.Parameter.empty:
            fields[name] = Required[annotation]
        else:
            fields[name] = NotRequired[annotation]
            defaults[name] = param.default
    if sig.return_annotation is inspect.Signature.empty or "return" not in hints:
        if not is_generator:
            raise ToolDefinitionError(
                f"tool function {label!r} has no return annotation; add one, e.g. `-> str` "
                "(or `-> None`)"
            )
        return_annotation: Any = inspect.Parameter.empty
    else:
        return_annotation = hints["return"]
    extra: Literal["allow", "forbid", "ignore"] = (
        "allow" if var_keyword else ("forbid" if extra_args == "reject" else "ignore")
    )
    config = ConfigDict(extra=extra, strict=strict, arbitrary_types_allowed=False)
    # The tool's rule for unknown fields holds in nested models too (``_nested_extra``).
    nested = "forbid" if extra_args == "reject" else None
    core, validator = _arguments(label, fields, config, extras, nested)
    schema = _json_schema(label, core, fields)
    descriptions: dict[str, str] = {}
    for name, prop in schema.get("properties", {}).items():
        text = prop.get("description") or str_descriptions.get(name) or doc.params.get(name)
        descriptions[name] = text or f"Parameter {name}"
        prop["description"] = descriptions[name]
        if name in defaults:
            ok, value = _jsonable_default(defaults[name])
            if ok:
                prop["default"] = value
            any_of = prop.get("anyOf")
            if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
                (inner,) = [s for s in any_of if s != {"type": "null"}]
                del prop["anyOf"]
                prop.update({k: v for k, v in inner.items() if k not in prop})
    if var_keyword and extras is None:
        schema["additionalProperties"] = True
    elif extra_args == "ignore":
        schema.pop("additionalProperties", None)
    required = frozenset(n for n in fields if n not in defaults)
    return Signature(
        params=tuple(fields),
        required=required,
        validator=validator,
        input_schema=schema,
        context_param=context_param,
        var_keyword=var_keyword,
        return_annotation=return_annotation,
        param_descriptions=descriptions,
        description=doc.description,
        skips_first=skips_first,
        arguments_core=core,
    )


def _extras_type(annotation: Any) -> Any:
    """The type every ``**kwargs`` value must have; None when any value will do.

    ``**counts: int`` validates each undeclared argument as an ``int``, as a declared
    parameter would be. ``Any``, ``object`` and ``Unpack[...]`` (named keys, not one type)
    leave the values as they are.
    """
    base, _ = _split_annotated(annotation)
    if base is Any or base is object or get_origin(base) is typing.Unpack:
        return None
    return annotation


def _title(label: str) -> str:
    name = "".join(part.capitalize() for part in label.replace(".", "_").split("_")) or "Args"
    return f"{name if name.isidentifier() else 'Args'}Arguments"


def _core_schema(
    title: str, fields: dict[str, Any], config: ConfigDict, extras: Any = None
) -> CoreSchema:
    """The typed dict of the parameters, made field by field (see the module's docstring).

    ``extras`` is the type of the values of undeclared arguments (typed ``**kwargs``).
    """
    try:
        from pydantic._internal._config import ConfigWrapper
        from pydantic._internal._decorators import DecoratorInfos
        from pydantic._internal._generate_schema import GenerateSchema
        from pydantic.fields import FieldInfo

        wrapper = ConfigWrapper(config)
        generate = GenerateSchema(wrapper)
        make_field = generate._generate_td_field_schema
    except (ImportError, AttributeError, TypeError):  # another pydantic: the public way
        make: Any = TypedDict  # the functional form, with fields known only at run time
        typed_dict = make(title, fields, total=False)
        typed_dict.__pydantic_config__ = config
        made = TypeAdapter(typed_dict).core_schema
        if extras is not None:
            inner: Any = made["schema"] if made["type"] == "definitions" else made
            inner["extras_schema"] = TypeAdapter(extras).core_schema
        return made
    decorators = DecoratorInfos()
    members = {
        name: make_field(
            name,
            FieldInfo.from_annotation(get_args(annotation)[0]),
            decorators,
            required=get_origin(annotation) is Required,
        )
        for name, annotation in fields.items()
    }
    schema = core_schema.typed_dict_schema(
        members,
        extra_behavior=config["extra"],
        extras_schema=generate.generate_schema(extras) if extras is not None else None,
        config=wrapper.core_config(title=title),
    )
    return generate.clean_schema(schema)


def _arguments(
    label: str,
    fields: dict[str, Any],
    config: ConfigDict,
    extras: Any = None,
    nested: str | None = None,
) -> tuple[CoreSchema, SchemaValidator]:
    """The core schema of the arguments and its validator (pydantic plugins included).

    ``nested``: the rule for unknown fields of nested models that state none of their own.
    """
    title = _title(label)
    try:
        core = _core_schema(title, fields, config, extras)
        if nested is not None:
            from toolpacks.core.define._nested_extra import close_nested

            core = close_nested(core, nested)
        try:
            from pydantic.plugin._schema_validator import create_schema_validator

            made: Any = create_schema_validator(
                core, title, "toolpacks", title, "TypeAdapter", core.get("config")
            )
            validator: SchemaValidator = made  # or pydantic's pluggable stand-in for it
        except ImportError:
            validator = SchemaValidator(core, core.get("config"))
        return core, validator
    except SchemaError as exc:
        raise ToolDefinitionError(
            f"tool function {label!r}: a parameter's constraints are invalid "
            f"({reason(exc)}); fix the Field(...) constraints (an uncompilable `pattern`, "
            "a wrong bound)"
        ) from exc
    except (PydanticSchemaGenerationError, TypeError, NameError) as exc:
        bad = _find_bad_param(fields)
        where = f"parameter {bad!r}" if bad else "a parameter"
        raise ToolDefinitionError(
            f"tool function {label!r}: {where} has a type with no JSON Schema "
            f"({reason(exc)}); use JSON-compatible types (str, int, float, bool, list, dict, "
            "Literal, Enum, "
            "pydantic models, dataclasses, TypedDict)"
        ) from exc


def _find_bad_param(fields: dict[str, Any]) -> str | None:
    for name, annotation in fields.items():
        try:
            TypeAdapter(get_args(annotation)[0]).json_schema()
        except Exception:
            return name
    return None


class _JsonSchema(GenerateJsonSchema):
    """pydantic's JSON Schema generator, its method table built from names found once."""

    _names: ClassVar[list[tuple[Any, str]]] = []

    def build_schema_type_to_method(self) -> dict[Any, Any]:
        """The table of methods by core schema type (pydantic's walks every type each time)."""
        if not _JsonSchema._names:
            table = super().build_schema_type_to_method().items()
            _JsonSchema._names = [(key, method.__name__) for key, method in table]
        return {key: getattr(self, name) for key, name in _JsonSchema._names}

    def model_schema(self, schema: Any) -> Any:
        """A model's schema, closed when the tool's rule (``_nested_extra``) closes it."""
        json_schema = super().model_schema(schema)
        if (schema.get("config") or {}).get("extra_fields_behavior") == "forbid":
            json_schema.setdefault("additionalProperties", False)
        return json_schema


def _json_schema(label: str, core: CoreSchema, fields: dict[str, Any]) -> dict[str, Any]:
    try:
        schema = _JsonSchema().generate(core, mode="validation")
    except Exception as exc:
        bad = _find_bad_param(fields)
        where = f"parameter {bad!r}" if bad else "a parameter"
        raise ToolDefinitionError(
            f"tool function {label!r}: {where} has a type with no JSON Schema "
            f"({reason(exc)}); use JSON-compatible types instead"
        ) from exc
    schema = drop_titles(schema)
    schema.setdefault("properties", {})
    return schema
