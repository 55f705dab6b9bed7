"""What a ``[credentials.NAME]`` table may say.

``kind = "secret"``: a value each user sets (an API key), with ``toolpacks credentials set``.
``kind = "oauth2"``: an OAuth 2 authorization-code grant with PKCE against ``authorize_url``
and ``token_url``, whose tokens are kept per user and refreshed. No value lives in the file:
``client_secret`` is read from the environment (``{ env = "VAR" }``) where it is used.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolpacks.core._secrets import redact

__all__ = ["CredentialConfig"]


class CredentialConfig(BaseModel):
    """One credential tools may declare (``[credentials.NAME]``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["secret", "oauth2"] = "secret"
    """``secret``: a value the user sets; ``oauth2``: tokens from an authorization server."""
    description: str = ""
    """What it is, for people (shown by ``toolpacks credentials list`` and in errors)."""
    authorize_url: str | None = None
    """``oauth2``: the authorization endpoint."""
    token_url: str | None = None
    """``oauth2``: the token endpoint (code exchange and refresh)."""
    revocation_url: str | None = None
    """``oauth2``: the RFC 7009 revocation endpoint, if the server has one."""
    client_id: str | dict[str, str] | None = None
    """``oauth2``: the client id (or ``{ env = "VAR" }``)."""
    client_secret: str | dict[str, str] | None = Field(default=None, repr=False)
    """``oauth2``: the client secret, ``{ env = "VAR" }`` (a confidential client), or unset
    (a public client: PKCE alone)."""
    scopes: list[str] = Field(default_factory=list)
    """``oauth2``: the scopes asked for."""
    connect_url: str | None = None
    """Where a user connects this credential, shown in the how-to-connect error (over HTTP
    the server's own ``/connect/NAME`` page is used for ``oauth2``)."""

    @model_validator(mode="after")
    def _check_kind(self) -> CredentialConfig:
        if self.kind == "oauth2":
            missing = [
                key for key in ("authorize_url", "token_url", "client_id") if not getattr(self, key)
            ]
            if missing:
                raise ValueError(f"kind = 'oauth2' needs {', '.join(missing)}")
        else:
            oauth = [
                key
                for key in ("authorize_url", "token_url", "revocation_url", "client_id")
                if getattr(self, key)
            ]
            if oauth or self.client_secret or self.scopes:
                raise ValueError(
                    "these keys are for kind = 'oauth2'; add kind = 'oauth2' or remove them"
                )
        return self

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        """The fields, secret-looking values redacted."""
        for name, value in super().__repr_args__():
            yield name, redact(value)
