"""The configuration reference lists every key the configuration accepts, and no other.

The keys are read from the configuration's pydantic models (``host/config/_models.py``), not from a
list kept here: a key added to a model and not to ``docs/reference/configuration.md`` fails
this test. A table of tables (``[agents.NAME]``) is written with ``NAME`` in its keys.
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from toolpacks.host.config._load import Config

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "configuration.md"
ROW = re.compile(r"^\|\s*`([a-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)`\s*\|", re.M)


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation holds directly (``Model``, ``Model | None``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if get_origin(annotation) in (Union, types.UnionType):
        return [m for arg in get_args(annotation) for m in _models(arg)]
    return []


def _table_of_models(annotation: Any) -> list[type[BaseModel]]:
    """The models of a table of tables (``dict[str, Model]``)."""
    if get_origin(annotation) is dict:
        return _models(get_args(annotation)[1])
    if get_origin(annotation) in (Union, types.UnionType):
        return [m for arg in get_args(annotation) for m in _table_of_models(arg)]
    return []


def config_keys(model: type[BaseModel] = Config, prefix: str = "") -> Iterator[str]:
    """Every key ``model`` accepts, dotted (``agents.NAME.packs``); tables are walked into."""
    for name, field in model.model_fields.items():
        key = f"{prefix}{field.alias or name}"
        nested = _models(field.annotation)
        tables = _table_of_models(field.annotation)
        for sub in nested:
            yield from config_keys(sub, f"{key}.")
        for sub in tables:
            yield from config_keys(sub, f"{key}.NAME.")
        if not nested and not tables:
            yield key


def documented_keys() -> list[str]:
    """The keys in the first column of the reference's tables."""
    return ROW.findall(REFERENCE.read_text(encoding="utf-8"))


def test_the_walk_finds_known_keys() -> None:
    """The walk reaches nested tables and tables of tables (a check of the test itself)."""
    keys = set(config_keys())
    assert {"agents.NAME.packs", "mcp_servers.NAME.command", "settings.expose_errors"} <= keys
    assert "llm.plugins" in keys
    assert "packs" in keys  # free-form: disabled, priority and one table per pack


def test_every_configuration_key_is_in_the_reference() -> None:
    """Each key a model accepts has a row (or, for a free-form table, rows below it)."""
    documented = documented_keys()
    missing = [
        key
        for key in config_keys()
        if key not in documented and not any(d.startswith(f"{key}.") for d in documented)
    ]
    assert not missing, f"add these keys to {REFERENCE.name}: {missing}"


def test_the_reference_lists_no_key_the_configuration_refuses() -> None:
    """Each row names a key a model accepts (or one inside a free-form table such as packs)."""
    keys = list(config_keys())
    unknown = [
        row
        for row in documented_keys()
        if row not in keys and not any(row.startswith(f"{key}.") for key in keys)
    ]
    assert not unknown, f"{REFERENCE.name} lists keys the configuration refuses: {unknown}"
