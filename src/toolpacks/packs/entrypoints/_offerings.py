"""Collecting a pack's prompts and resources (its ``register_prompts``/``register_resources``).

Each hook gets a ``register`` callback of its own, as ``register_tools`` does: it knows the
pack, stamps it on what is registered, and refuses what is neither a prompt nor a resource
with a message that names the pack and the fix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolpacks.core.prompts._prompt import Prompt, prompt
from toolpacks.core.prompts._resource import Resource
from toolpacks.exceptions import PackError

__all__ = ["OfferingRegistrar", "collect_offerings"]


class OfferingRegistrar:
    """The ``register`` callback of ``register_prompts`` or ``register_resources``."""

    def __init__(
        self, kind: str, pack: str, config: Mapping[str, Any], config_dir: Path | None
    ) -> None:
        self.kind = kind
        self.pack = pack
        """The pack registering."""
        self.config = config
        """The pack's settings from ``[packs.NAME]``."""
        self.config_dir = config_dir
        """The directory of the configuration file the settings came from (or None)."""
        self.items: list[Any] = []

    def __call__(self, item: Any, /, **options: Any) -> None:
        """Register a ``Prompt`` (or a function, made one) or a ``Resource``."""
        if self.kind == "prompt":
            if not isinstance(item, Prompt):
                if not callable(item):
                    raise PackError(
                        f"pack {self.pack!r} registered {item!r} as a prompt; register a "
                        "toolpacks.Prompt or a function (made one as @toolpacks.prompt would)"
                    )
                item = prompt(**options)(item) if options else prompt(item)
            self.items.append(replace(item, pack=self.pack))
            return
        if not isinstance(item, Resource):
            raise PackError(
                f"pack {self.pack!r} registered {item!r} as a resource; register a "
                "toolpacks.Resource (decorate its function with @toolpacks.resource(uri))"
            )
        self.items.append(replace(item, pack=self.pack, listeners=item.listeners))


def collect_offerings(
    impls: Callable[[str], list[Callable[..., Any]]],
    pack: str,
    settings: Mapping[str, Any],
    config_dir: Path | None,
) -> tuple[list[Prompt], list[Resource]]:
    """Call a pack's ``register_prompts`` and ``register_resources`` implementations.

    Args:
        impls: The pack's implementations (callers taking ``register=``) of a hook by name.
        pack: The name the pack is loaded under.
        settings: Its settings.
        config_dir: Where its settings came from.
    """
    prompts = OfferingRegistrar("prompt", pack, settings, config_dir)
    resources = OfferingRegistrar("resource", pack, settings, config_dir)
    for call in impls("register_prompts"):
        call(register=prompts)
    for call in impls("register_resources"):
        call(register=resources)
    return prompts.items, resources.items
