"""Fixtures shared by every test directory."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest


@pytest.fixture
def run() -> Callable[[Coroutine[Any, Any, Any]], Any]:
    """Run a coroutine to completion in a fresh event loop: ``run(tool.invoke({...}))``."""
    return asyncio.run
