"""The functions every library turns into tools, and the floors they are measured against.

The same plain functions are decorated by toolpacks and by each peer; the floor is what any of
them must do at least: pydantic's ``TypeAdapter`` over a ``TypedDict`` of the same parameters
(``validate_python``) and a direct call of the function.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, NotRequired, Optional, Required

from pydantic import BaseModel, Field, TypeAdapter
from typing_extensions import TypedDict

# -- small signature ------------------------------------------------------------------------


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


ADD_ARGS: dict[str, Any] = {"a": 1, "b": 2}
ADD_JSON = json.dumps(ADD_ARGS)


class AddArgs(TypedDict):
    a: int
    b: int


ADD_ADAPTER: TypeAdapter[AddArgs] = TypeAdapter(AddArgs)

# -- rich signature -------------------------------------------------------------------------


class Address(BaseModel):
    """A postal address."""

    street: str = Field(description="Street and number")
    city: str = Field(description="City name")
    zip_code: Annotated[str, Field(pattern=r"^[0-9]{5}$", description="Five-digit ZIP code")]
    country: Literal["US", "CA", "MX"] = "US"


def create_user(
    name: Annotated[str, Field(description="Full name of the user", min_length=1)],
    age: Annotated[int, Field(description="Age in years", ge=0, le=150)],
    address: Address,
    role: Literal["admin", "editor", "viewer"] = "viewer",
    tags: list[str] | None = None,
    nickname: Optional[str] = None,  # noqa: UP045 - the Optional spelling is part of the test
    scores: Annotated[list[float], Field(description="Recent scores")] = [],  # noqa: B006
    notify: bool = True,
) -> dict[str, Any]:
    """Create a user account.

    Args:
        name: Full name of the user.
        age: Age in years.
        address: Where the user lives.
        role: The user's role.
        tags: Free-form labels.
        nickname: What to call the user.
        scores: Recent scores.
        notify: Whether to send a welcome message.
    """
    return {"name": name, "age": age, "city": address.city, "role": role}


async def create_user_async(
    name: Annotated[str, Field(description="Full name of the user", min_length=1)],
    age: Annotated[int, Field(description="Age in years", ge=0, le=150)],
    address: Address,
    role: Literal["admin", "editor", "viewer"] = "viewer",
    tags: list[str] | None = None,
    nickname: Optional[str] = None,  # noqa: UP045
    scores: Annotated[list[float], Field(description="Recent scores")] = [],  # noqa: B006
    notify: bool = True,
) -> dict[str, Any]:
    """Create a user account.

    Args:
        name: Full name of the user.
        age: Age in years.
        address: Where the user lives.
        role: The user's role.
        tags: Free-form labels.
        nickname: What to call the user.
        scores: Recent scores.
        notify: Whether to send a welcome message.
    """
    return {"name": name, "age": age, "city": address.city, "role": role}


def create_user_str_descriptions(
    name: Annotated[str, "Full name of the user"],
    age: Annotated[int, "Age in years"],
    address: Address,
    role: Literal["admin", "editor", "viewer"] = "viewer",
    tags: list[str] | None = None,
    nickname: Optional[str] = None,  # noqa: UP045
    scores: Annotated[list[float], "Recent scores"] = [],  # noqa: B006
    notify: bool = True,
) -> dict[str, Any]:
    """Create a user account (the rich signature without ``Field`` in ``Annotated``).

    For a library that rejects ``Annotated[T, Field(...)]``: descriptions as plain strings, no
    constraints on ``name`` and ``age``.

    Args:
        name: Full name of the user.
        age: Age in years.
        address: Where the user lives.
        role: The user's role.
        tags: Free-form labels.
        nickname: What to call the user.
        scores: Recent scores.
        notify: Whether to send a welcome message.
    """
    return {"name": name, "age": age, "city": address.city, "role": role}


RICH_FIELDS: dict[str, Any] = {
    "name": Required[Annotated[str, Field(description="Full name of the user", min_length=1)]],
    "age": Required[Annotated[int, Field(description="Age in years", ge=0, le=150)]],
    "address": Required[Address],
    "role": NotRequired[Literal["admin", "editor", "viewer"]],
    "tags": NotRequired[list[str] | None],
    "nickname": NotRequired[Optional[str]],  # noqa: UP045
    "scores": NotRequired[Annotated[list[float], Field(description="Recent scores")]],
    "notify": NotRequired[bool],
}

SMALL_FIELDS: dict[str, Any] = {"a": Required[int], "b": Required[int]}


def make_typed_dict(name: str, fields: dict[str, Any]) -> Any:
    return TypedDict(name, fields, total=False)  # type: ignore[operator]


def floor_define(fields: dict[str, Any]) -> dict[str, Any]:
    """The floor of defining a tool: a TypedDict of the parameters, its adapter, its schema."""
    return TypeAdapter(make_typed_dict("Args", fields)).json_schema()


RichArgs = make_typed_dict("RichArgs", RICH_FIELDS)
RICH_ADAPTER: TypeAdapter[Any] = TypeAdapter(RichArgs)
RICH_ARGS: dict[str, Any] = {
    "name": "Ada Lovelace",
    "age": 36,
    "address": {"street": "12 St James's Square", "city": "London", "zip_code": "12345"},
    "role": "admin",
    "tags": ["math", "poetry"],
    "scores": [1.0, 2.5],
}
RICH_JSON = json.dumps(RICH_ARGS)
