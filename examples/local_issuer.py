r"""A tiny local OAuth issuer for trying ``[auth]``: it serves its keys and signs tokens.

Not an authorization server you would run for real users: it has no login, no clients and
signs whatever you ask. It serves what a resource server needs to check tokens (RFC 8414
metadata and a JWKS) and prints RS256 access tokens (RFC 9068) from the command line.

    python examples/local_issuer.py serve --port 9000
    python examples/local_issuer.py token --issuer http://127.0.0.1:9000 \\
        --audience http://127.0.0.1:8000/mcp --sub alice --scope "support.use"

Both commands use the same RSA key, kept in ``local-issuer-key.pem`` (made on first use).
Needs ``pyjwt[crypto]`` (``pip install 'toolpacks[http]'``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

KID = "local-1"


def load_key(path: Path) -> Any:
    """The issuer's RSA key, made and saved on first use."""
    if path.exists():
        return serialization.load_pem_private_key(path.read_bytes(), password=None)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path.write_bytes(pem)
    path.chmod(0o600)
    return key


def serve(port: int, key: Any) -> None:
    """Serve the metadata and the JWKS on 127.0.0.1 until interrupted."""
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    issuer = f"http://127.0.0.1:{server.server_address[1]}"
    jwk = json.loads(jwt.get_algorithm_by_name("RS256").to_jwk(key.public_key()))
    Handler.documents = {
        "/.well-known/oauth-authorization-server": {
            "issuer": issuer,
            "jwks_uri": f"{issuer}/jwks",
            "response_types_supported": ["code"],
        },
        "/jwks": {"keys": [{**jwk, "kid": KID, "alg": "RS256", "use": "sig"}]},
    }
    print(f"issuer {issuer}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


class Handler(BaseHTTPRequestHandler):
    """Answers GET for the two documents."""

    documents: ClassVar[dict[str, Any]] = {}

    def log_message(self, *args: Any) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        """The document at the path, or 404."""
        document = self.documents.get(self.path)
        raw = json.dumps(document if document is not None else {"error": "not found"}).encode()
        self.send_response(200 if document is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def token(key: Any, issuer: str, audience: str, sub: str, scope: str, minutes: int) -> str:
    """An RS256 access token for ``sub`` with ``scope``."""
    now = int(time.time())
    claims = {
        "iss": issuer,
        "aud": audience,
        "sub": sub,
        "scope": scope,
        "iat": now,
        "exp": now + 60 * minutes,
        "client_id": "local",
    }
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": KID, "typ": "at+jwt"})


def main(argv: list[str] | None = None) -> int:
    """The command line: ``serve`` or ``token``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key-file", default="local-issuer-key.pem", type=Path)
    commands = parser.add_subparsers(dest="command", required=True)
    served = commands.add_parser("serve", help="serve the metadata and keys")
    served.add_argument("--port", type=int, default=9000)
    made = commands.add_parser("token", help="print an access token")
    made.add_argument("--issuer", default="http://127.0.0.1:9000")
    made.add_argument("--audience", required=True)
    made.add_argument("--sub", required=True)
    made.add_argument("--scope", default="")
    made.add_argument("--minutes", type=int, default=60)
    args = parser.parse_args(argv)
    key = load_key(args.key_file)
    if args.command == "serve":
        serve(args.port, key)
    else:
        print(token(key, args.issuer, args.audience, args.sub, args.scope, args.minutes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
