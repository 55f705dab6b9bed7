"""Subtools with scoped names, doc trees, and the explicit ``Registry``."""

from __future__ import annotations

from typing import Any

import pytest

from toolpacks import (
    Registry,
    Tool,
    ToolConflictError,
    ToolNotFoundError,
    tool,
)


@pytest.fixture
def manage_users() -> Tool:
    """A root tool with a subtool that has its own subtool."""

    @tool
    def manage_users() -> str:
        """Manage users."""
        return "users"

    @manage_users.subtool
    def create_user(name: str) -> str:
        """Create a user."""
        return name

    @create_user.subtool()
    def grant(role: str) -> str:
        """Grant a role."""
        return role

    @manage_users.subtool
    def delete_user(name: str) -> str:
        """Delete a user."""
        return name

    return manage_users


@pytest.fixture
def manage_posts() -> Tool:
    """Another root tool whose subtool has the same short name as one of manage_users."""

    @tool
    def manage_posts() -> str:
        """Manage posts."""
        return "posts"

    @manage_posts.subtool
    def create_user(name: str) -> str:
        """Create a post author."""
        return name

    return manage_posts


def test_subtools_have_scoped_names(manage_users: Tool) -> None:
    """Children are scoped ``parent.child``, grandchildren ``a.b.c``."""
    assert [t.scoped_name for t in manage_users.walk()] == [
        "manage_users",
        "manage_users.create_user",
        "manage_users.create_user.grant",
        "manage_users.delete_user",
    ]


def test_subtool_short_names_stay_short(manage_users: Tool) -> None:
    """A subtool's ``name`` and ``metadata.name`` are its short name."""
    create_user = manage_users.subtools[0]
    assert (create_user.name, create_user.metadata.name) == ("create_user", "create_user")
    assert create_user.parent is manage_users


def test_doc_tree_has_short_names_in_definition_order(manage_users: Tool) -> None:
    """``doc_tree()`` is name/description/subtools recursively, with no timing fields."""
    assert manage_users.doc_tree() == {
        "name": "manage_users",
        "description": "Manage users.",
        "subtools": [
            {
                "name": "create_user",
                "description": "Create a user.",
                "subtools": [{"name": "grant", "description": "Grant a role.", "subtools": []}],
            },
            {"name": "delete_user", "description": "Delete a user.", "subtools": []},
        ],
    }


def test_subtool_takes_the_options_of_tool(run: Any) -> None:
    """``subtool(...)`` accepts lock, tags, name and fixed kwargs like ``@tool``."""

    @tool
    def admin() -> str:
        """Admin."""
        return ""

    @admin.subtool(name="add", lock=True, tags=["write"], role="admin")
    def create(user: str, role: str) -> str:
        """Create."""
        return f"{user}:{role}"

    assert create.scoped_name == "admin.add"
    assert create.lock is not None
    assert create.tags == frozenset({"write"})
    assert list(create.input_schema["properties"]) == ["user"]
    assert run(create.invoke({"user": "ada"})).value == "ada:admin"


def test_subtool_with_a_taken_name_is_refused() -> None:
    """Two subtools of one parent cannot share a name."""

    @tool
    def parent() -> str:
        """Parent."""
        return ""

    @parent.subtool
    def child() -> str:
        """Child."""
        return ""

    def other() -> str:
        """Other."""
        return ""

    with pytest.raises(ToolConflictError, match="'parent' already has a subtool named 'child'"):
        parent.subtool(name="child")(other)
    assert [t.name for t in parent.subtools] == ["child"]


def test_subtool_fixed_kwarg_must_match(manage_users: Tool) -> None:
    """A subtool's fixed kwarg that the function cannot accept is a TypeError."""

    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(TypeError, match="do not match"):
        manage_users.subtool(nope=1)(f)


# -- registry ----------------------------------------------------------------------------------


def test_registry_adds_a_tool_with_its_subtools(registry: Registry, manage_users: Tool) -> None:
    """``add`` registers the tool and every subtool under its scoped name."""
    assert registry.add(manage_users) is manage_users
    assert [t.scoped_name for t in registry.all()] == [
        "manage_users",
        "manage_users.create_user",
        "manage_users.create_user.grant",
        "manage_users.delete_user",
    ]
    assert registry.get("manage_users.create_user.grant").name == "grant"
    assert len(registry) == 4
    assert "manage_users.delete_user" in registry


def test_same_short_names_under_different_parents_coexist(
    registry: Registry, manage_users: Tool, manage_posts: Tool
) -> None:
    """``manage_users.create_user`` and ``manage_posts.create_user`` live side by side."""
    registry.add(manage_users)
    registry.add(manage_posts)
    assert registry.get("manage_users.create_user").description == "Create a user."
    assert registry.get("manage_posts.create_user").description == "Create a post author."


def test_definitions_are_doc_trees_of_root_tools(
    registry: Registry, manage_users: Tool, manage_posts: Tool
) -> None:
    """``definitions()`` gives one doc tree per root tool, in registration order."""
    registry.add(manage_posts)
    registry.add(manage_users)
    assert registry.definitions() == [manage_posts.doc_tree(), manage_users.doc_tree()]


def test_duplicate_name_is_a_conflict_and_nothing_is_added(
    registry: Registry, manage_users: Tool
) -> None:
    """Adding a taken name raises ToolConflictError (a ValueError), leaving the registry as is."""

    @tool
    def other() -> str:
        """Other."""
        return ""

    @tool(name="manage_users")
    def clash() -> str:
        """Clash."""
        return ""

    @clash.subtool
    def fresh() -> str:
        """Would be new."""
        return ""

    registry.add(manage_users)
    registry.add(other)
    with pytest.raises(ValueError, match="a tool named 'manage_users' is already registered"):
        registry.add(clash)
    assert issubclass(ToolConflictError, ValueError)
    assert "manage_users.fresh" not in registry
    assert registry.get("manage_users") is manage_users


def test_unknown_name_raises_tool_not_found(registry: Registry, manage_posts: Tool) -> None:
    """``get`` of an unknown name raises ToolNotFoundError (a LookupError) listing names."""
    registry.add(manage_posts)
    with pytest.raises(LookupError) as caught:
        registry.get("nope")
    error = caught.value
    assert isinstance(error, ToolNotFoundError)
    assert error.name == "nope"
    assert error.available == ("manage_posts", "manage_posts.create_user")
    assert str(error) == "no tool named 'nope'; available: manage_posts, manage_posts.create_user"


def test_non_tool_is_a_type_error(registry: Registry) -> None:
    """Adding something that is not a Tool raises TypeError "Expected Tool object"."""

    def plain(x: int) -> int:
        return x

    with pytest.raises(TypeError, match="Expected Tool object"):
        registry.add(plain)  # type: ignore[arg-type]


def test_remove_takes_subtools_along(registry: Registry, manage_users: Tool) -> None:
    """``remove`` returns the tool and drops its subtools; unknown names raise."""
    registry.add(manage_users)
    assert registry.remove("manage_users.create_user").name == "create_user"
    assert [t.scoped_name for t in registry] == ["manage_users", "manage_users.delete_user"]
    with pytest.raises(ToolNotFoundError):
        registry.remove("manage_users.create_user.grant")


def test_registry_from_an_iterable(manage_posts: Tool) -> None:
    """``Registry(tools)`` adds each tool."""
    registry = Registry([manage_posts])
    assert registry.get("manage_posts") is manage_posts


def test_registries_are_independent(manage_posts: Tool) -> None:
    """There is no hidden global registry: each Registry holds only what was added."""
    first, second = Registry([manage_posts]), Registry()
    assert "manage_posts" in first
    assert "manage_posts" not in second
    assert second.all() == []
