"""Who is calling: the ``Authorization`` header turned into a principal, or a 401 / 403.

One ``Authenticator`` per app checks every MCP request the same way, before its body is
read and before the request is routed, so the direct route and the SDK road see exactly the
same checks. In order: exactly one ``Authorization`` header, at most 8 KiB, ``Bearer``; the
server-wide token (``--token-env``: every agent, no principal); the agent's own token
(``[agents.NAME] token``: a principal ``agent-token:NAME`` holding the agent's scopes); else,
with ``[auth]``, a verified access token. Every bad token gets the same opaque 401; the
operator's log says why, never the token. A principal without the agent's ``scopes`` gets
403 ``insufficient_scope`` naming them (step-up).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from toolpacks.core._principal import Principal
from toolpacks.mcp.http._guard import Refusal
from toolpacks.mcp.http.auth._metadata import WELL_KNOWN, base_url
from toolpacks.mcp.http.auth._static import StaticTokens
from toolpacks.mcp.http.auth._verify import MAX_TOKEN_BYTES, InvalidToken, TokenVerifier

if TYPE_CHECKING:
    from toolpacks.host.config._auth import AuthConfig

__all__ = ["Authenticator", "audit_refusal"]

logger = logging.getLogger("toolpacks.mcp.auth")

MISSING = "Unauthorized: this server needs an 'Authorization: Bearer <token>' header"
INVALID = "Unauthorized: the bearer token is not valid"


def audit_refusal(agent: str | None, subject: str | None, reason: str, status: int) -> None:
    """One ``toolpacks.audit`` record for a request refused before it reached a toolset.

    Recorded by the identity layer's ``audit_refusal`` (the same record shape as every
    call's), with the HTTP status: ``unauthenticated`` (401), ``agent_scope`` or
    ``forbidden`` (403); never the token.
    """
    from toolpacks.host.identity._audit import audit_refusal as record

    record(agent, subject, reason, road=f"http_{status}")


class Authenticator:
    """The token checks of one HTTP app (inactive when nothing asks for a token)."""

    def __init__(
        self,
        config: AuthConfig | None,
        tokens: StaticTokens,
        agent_scopes: Mapping[str, Iterable[str]],
        verifier: TokenVerifier | None = None,
    ) -> None:
        self.config = config
        self.tokens = tokens
        self.agent_scopes = {name: frozenset(s) for name, s in agent_scopes.items()}
        self.verifier = verifier or (TokenVerifier(config) if config is not None else None)

    @property
    def active(self) -> bool:
        """Whether requests must carry a token."""
        return self.config is not None or self.tokens.any

    def metadata_url(self, scope: Mapping[str, Any]) -> str:
        """The absolute URL of the protected resource metadata of the requested endpoint."""
        base = base_url(self.config, scope["headers"], scope.get("scheme", "http"))
        return f"{base}{WELL_KNOWN}{scope.get('root_path', '')}{scope['path']}"

    def _challenge(self, scope: Mapping[str, Any], error: str = "") -> tuple[str, str]:
        parts = ['Bearer realm="toolpacks"']
        if self.config is not None:
            parts = [f'Bearer resource_metadata="{self.metadata_url(scope)}"']
        if error:
            parts.append(f'error="{error}"')
        return ("WWW-Authenticate", ", ".join(parts))

    def _unauthorized(
        self, agent: str | None, scope: Mapping[str, Any], why: str, sent: bool
    ) -> Refusal:
        if sent:
            logger.warning("agent %s: bearer token refused: %s", agent or "-", why)
        audit_refusal(agent, None, "unauthenticated", 401)
        error = "invalid_token" if sent else ""
        return Refusal(
            401, "unauthorized", INVALID if sent else MISSING, (self._challenge(scope, error),)
        )

    async def identify(
        self, agent: str | None, scope: Mapping[str, Any]
    ) -> tuple[Principal | None, Refusal | None]:
        """The caller of a request to ``agent`` (None: ``/metrics``): a principal or a refusal.

        ``(None, None)`` lets the request in without a principal: no token is needed, or the
        server-wide token was sent.
        """
        if not self.active:
            return None, None
        values = [v for k, v in scope["headers"] if k == b"authorization"]
        if not values:
            return None, self._unauthorized(agent, scope, "no Authorization header", False)
        if len(values) > 1:
            return None, self._unauthorized(agent, scope, "several Authorization headers", True)
        value = values[0]
        if len(value) > MAX_TOKEN_BYTES:
            why = f"Authorization header over {MAX_TOKEN_BYTES} bytes"
            return None, self._unauthorized(agent, scope, why, True)
        scheme, _, credential = value.strip().partition(b" ")
        credential = credential.strip()
        if scheme.lower() != b"bearer" or not credential:
            return None, self._unauthorized(agent, scope, "not a Bearer credential", True)
        if self.tokens.is_server_token(credential):
            return None, None
        if agent is not None and self.tokens.is_agent_token(agent, credential):
            principal = Principal(
                f"agent-token:{agent}", scopes=self.agent_scopes.get(agent, frozenset())
            )
            return principal, None
        if self.verifier is None:
            return None, self._unauthorized(agent, scope, "not a token of this agent", True)
        try:
            principal = await self.verifier.verify(credential.decode("ascii"))
        except UnicodeDecodeError:
            return None, self._unauthorized(agent, scope, "a token that is not ASCII", True)
        except InvalidToken as exc:
            return None, self._unauthorized(agent, scope, str(exc), True)
        return principal, self._step_up(agent, principal, scope)

    def _step_up(
        self, agent: str | None, principal: Principal, scope: Mapping[str, Any]
    ) -> Refusal | None:
        """A 403 ``insufficient_scope`` when the principal lacks the agent's scopes."""
        if agent is None:
            needed = frozenset(
                {self.config.metrics_scope} if self.config and self.config.metrics_scope else ()
            )
            if not needed:
                return self._forbidden(agent, principal, scope, "", "forbidden")
        else:
            needed = self.agent_scopes.get(agent, frozenset())
        if principal.scopes >= needed:
            return None
        reason = "agent_scope" if agent is not None else "forbidden"
        return self._forbidden(agent, principal, scope, " ".join(sorted(needed)), reason)

    def _forbidden(
        self,
        agent: str | None,
        principal: Principal,
        scope: Mapping[str, Any],
        needed: str,
        reason: str,
    ) -> Refusal:
        logger.warning(
            "agent %s: %s lacks scopes %r", agent or "/metrics", principal.subject, needed
        )
        audit_refusal(agent, principal.subject, reason, 403)
        header = f'{self._challenge(scope)[1]}, error="insufficient_scope"'
        if needed:
            header += f', scope="{needed}"'
            message = f"Forbidden: this endpoint needs the scopes: {needed}"
        else:
            message = "Forbidden: this endpoint is not open to access tokens"
        return Refusal(403, "forbidden", message, (("WWW-Authenticate", header),))
