"""Tokens saved by deferred loading: the first request's tool list against the full one.

An agent of 500 tools (25 packs of 20, each with a two-parameter schema and a one-line
description) with ``defer = "auto"``: every tool is deferred (500 > 30). For each format,
the characters of what the model is shown up front (the JSON of ``definitions(format)``;
for ``anthropic`` and ``openai-responses``, without the definitions marked
``defer_loading``, which the provider keeps out of the model's context) are divided by the
characters of the full list (``definitions(format, defer=False)``). Target: at most 5%.

Run: ``python bench/defer_tokens.py``.
"""

from __future__ import annotations

import json
from typing import Any

from toolpacks import Toolset, tool
from toolpacks.host._defer import apply_defer
from toolpacks.host._toolset import ToolEntry

PACKS, PER_PACK = 25, 20
FORMATS = ("openai", "openai-responses", "anthropic", "gemini", "bedrock", "mcp", "neutral")


def _toolset() -> Toolset:
    entries: list[ToolEntry] = []
    for p in range(PACKS):
        for t in range(PER_PACK):
            name = f"p{p}_action_{t}"

            def run(target: str, count: int = 1) -> str:
                return target * count

            run.__doc__ = (
                f"Perform action {t} of service {p} on a target, a given number of times.\n\n"
                "Args:\n    target: What the action applies to.\n    count: How many times."
            )
            made = tool(name=name)(run)
            entries.append(ToolEntry(name, f"pack{p}.{name}", f"pack{p}", made))
    return Toolset(apply_defer(entries, "auto"))


def _visible(definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the model sees: definitions marked ``defer_loading`` are left out."""
    out: list[dict[str, Any]] = []
    for d in definitions:
        if d.get("defer_loading"):
            continue
        if d.get("type") == "namespace":
            d = {**d, "tools": [f for f in d["tools"] if not f.get("defer_loading")]}
        out.append(d)
    return out


def main() -> None:
    toolset = _toolset()
    print(f"{len(toolset)} tools, {len(toolset.deferred)} deferred (defer = \"auto\")")
    print(f"{'format':<18} {'up front':>10} {'full':>10} {'ratio':>8}")
    for fmt in FORMATS:
        full = len(json.dumps(toolset.definitions(fmt, defer=False)))
        first = len(json.dumps(_visible(toolset.definitions(fmt))))
        print(f"{fmt:<18} {first:>10} {full:>10} {first / full:>8.2%}")


if __name__ == "__main__":
    main()
