"""Bearer tokens written in the configuration: one for the whole server, one per agent.

Each is kept as its SHA-256 digest and compared in constant time (``hmac.compare_digest``),
so neither the token nor its length leaks; tokens are never logged. A per-agent token
(``[agents.NAME] token = { env = "VAR" }``) reaches that agent only.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping

from toolpacks.exceptions import ConfigError

__all__ = ["StaticTokens", "agent_tokens"]


def _digest(token: str | bytes) -> bytes:
    raw = token.encode() if isinstance(token, str) else token
    return hashlib.sha256(raw).digest()


class StaticTokens:
    """The server-wide token (``--token-env``) and the per-agent ones."""

    def __init__(self, server: str | None, agents: Mapping[str, str]) -> None:
        self._server = _digest(server) if server is not None else None
        self._agents = {name: _digest(token) for name, token in agents.items()}

    @property
    def any(self) -> bool:
        """Whether any static token is configured."""
        return self._server is not None or bool(self._agents)

    def has_agent_token(self, agent: str) -> bool:
        """Whether ``agent`` has a token of its own."""
        return agent in self._agents

    def is_server_token(self, credential: bytes) -> bool:
        """Whether ``credential`` is the server-wide token (every agent, ``/metrics``)."""
        return self._server is not None and hmac.compare_digest(_digest(credential), self._server)

    def is_agent_token(self, agent: str, credential: bytes) -> bool:
        """Whether ``credential`` is ``agent``'s own token (never another agent's)."""
        expected = self._agents.get(agent)
        return expected is not None and hmac.compare_digest(_digest(credential), expected)


def agent_tokens(
    agents: Mapping[str, Mapping[str, str] | None], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The per-agent tokens of the served agents, read from the environment.

    Raises:
        ConfigError: A ``token`` table is not ``{ env = "VAR" }``, or the variable is unset,
            empty or not a value a client can send in a header.
    """
    from toolpacks.mcp.http._guard import check_token

    env = os.environ if environ is None else environ
    tokens: dict[str, str] = {}
    for name, spec in agents.items():
        if spec is None:
            continue
        if set(spec) != {"env"} or not isinstance(spec.get("env"), str):
            raise ConfigError(
                f'[agents.{name}] token must be {{ env = "VAR" }} (the token is read from the '
                "environment variable VAR, never written in the file)"
            )
        value = env.get(spec["env"], "")
        try:
            check_token(value)
        except ValueError as exc:
            raise ConfigError(
                f"[agents.{name}] token: environment variable {spec['env']} is not set or "
                f"not usable ({exc}); export {spec['env']}=<a long random value>"
            ) from None
        tokens[name] = value
    return tokens
