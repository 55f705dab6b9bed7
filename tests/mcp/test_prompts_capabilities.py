"""What a server offering prompts and resources advertises, on each road, and logging/setLevel.

The official client sees the ``prompts``, ``resources`` (with ``subscribe`` on 2025-11-25)
and ``completions`` capabilities, and ``logging``, whose ``logging/setLevel`` the server
answers with ``{}`` (before, the SDK road over HTTP said "Method not found", which failed the
conformance suite's logging scenarios).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_prompts import ROADS, OfferServer, connect, http_server, offer_dir, served
from .test_rich_stdio import run

__all__ = ["http_server", "offer_dir", "served"]  # fixtures shared with test_prompts


@pytest.mark.parametrize("road", ROADS)
def test_capabilities_and_set_level(road: str, offer_dir: Path, served: OfferServer | None) -> None:
    """prompts, resources (subscribe), completions and logging; setLevel answered {}."""

    async def main() -> None:
        async with connect(road, offer_dir, served, "memo", "legacy") as client:
            caps = client.server_capabilities
            assert caps is not None
            assert caps.prompts is not None
            assert caps.resources is not None
            assert caps.resources.subscribe is True
            assert caps.completions is not None
            assert caps.logging is not None
            answer = await client.set_logging_level("info")
            assert answer.model_dump(exclude_none=True) == {}

    run(main())
