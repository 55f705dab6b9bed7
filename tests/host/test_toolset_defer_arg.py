"""``Toolset(tools, defer=...)``: deferral without a host and without private imports (issue 35)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolpacks import ConfigError, Toolset, tool


@tool
def get_customer(customer_id: str) -> str:
    """Look up a customer record in the CRM by its id."""
    return customer_id


@tool
def now() -> str:
    """The current time."""
    return "noon"


def test_defer_patterns_defer_the_tools_they_match() -> None:
    toolset = Toolset([get_customer, now], defer=["get_*"])
    assert toolset.deferred == {"get_customer"}
    names = [d["function"]["name"] for d in toolset.definitions("openai")]
    assert names == ["now", "search_tools"]


def test_no_defer_defers_nothing_and_auto_defers_only_large_toolsets() -> None:
    assert Toolset([get_customer, now]).deferred == frozenset()
    assert Toolset([get_customer, now], defer="auto").deferred == frozenset()


def test_a_pattern_that_matches_nothing_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match=r"Toolset\(defer=\.\.\.\).*nothing_like_it"):
        Toolset([get_customer, now], defer=["nothing_like_it"])


def test_the_guides_import_no_private_module() -> None:
    """Every guide's code uses public names only."""
    docs = Path(__file__).parents[2] / "docs"
    private = re.compile(r"from toolpacks(\.\w+)*\._\w+ import|import toolpacks(\.\w+)*\._")
    found = [
        f"{page.relative_to(docs)}: {m.group(0)}"
        for page in sorted(docs.rglob("*.md"))
        for m in private.finditer(page.read_text(encoding="utf-8"))
    ]
    assert not found, found
