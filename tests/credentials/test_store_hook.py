"""A pack supplies the credential store through ``toolpacks_credential_store``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolpacks import Principal, ToolContext, hookimpl, tool
from toolpacks.testing import make_host


class VaultStore:
    """A pack's store (a stand-in for a vault client): values kept by (name, subject)."""

    def __init__(self) -> None:
        self.values = {("github", "alice"): "from-the-vault"}
        self.asked: list[tuple[str, str]] = []

    def get(self, name: str, subject: str) -> str | None:
        self.asked.append((name, subject))
        return self.values.get((name, subject))

    def set(self, name: str, subject: str, value: str) -> None:
        self.values[name, subject] = value

    def delete(self, name: str, subject: str) -> bool:
        return self.values.pop((name, subject), None) is not None

    def list(self, subject: str | None = None) -> Sequence[Any]:
        return []


@tool(credentials=["github"])
def whoami(ctx: ToolContext) -> str:
    """Say which GitHub token the call received."""
    return ctx.credential("github")


def test_a_pack_store_serves_and_the_default_is_not_made(dirs: dict[str, Path]) -> None:
    """The pack's store answers; no SQLite store or key file appears in the state directory."""
    vault = VaultStore()

    class VaultPack:
        @hookimpl
        def toolpacks_credential_store(self) -> VaultStore:
            return vault

        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(whoami)

    config = {"credentials": {"github": {"kind": "secret"}}}
    toolset = make_host(VaultPack(), names=["vault"], config=config).toolset()
    result = toolset.call_sync("whoami", {}, ToolContext(principal=Principal("alice")))
    assert result.value == "from-the-vault"
    assert vault.asked == [("github", "alice")]
    assert not dirs["state"].exists() or not any(dirs["state"].iterdir())
