"""``toolpacks credentials set | login | list | delete``: each user's credentials.

``set`` reads the value from stdin (never an argument: arguments show in ``ps`` and shell
history); ``login`` runs an ``oauth2`` credential's authorization-code flow with PKCE through
a loopback redirect (RFC 8252); ``list`` shows names, subjects and dates, never values.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from toolpacks.cli._errors import CliError

if TYPE_CHECKING:
    from toolpacks.host.credentials._settings import CredentialConfig
    from toolpacks.host.credentials._store import SqliteCredentialStore

__all__ = ["add_credentials", "cmd_credentials"]


def add_credentials(add: Any) -> None:
    """Add ``credentials`` and its actions to the parser (``add`` makes a sub-parser)."""
    p = add(
        "credentials",
        "Set, connect, list or delete a user's credentials ([credentials.NAME]).",
        'echo -n "$TOKEN" | toolpacks credentials set github --subject alice',
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    s = actions.add_parser("set", help="store a value read from stdin")
    s.add_argument("name")
    s.add_argument("--subject", required=True, help="whose it is (a principal's subject)")
    s = actions.add_parser("login", help="connect an oauth2 credential in the browser")
    s.add_argument("name")
    s.add_argument("--subject", required=True)
    s.add_argument("--port", type=int, default=0, help="loopback port (default: any free one)")
    s.add_argument("--no-browser", action="store_true", help="only print the URL")
    s.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for it")
    s = actions.add_parser("list", help="names, subjects and dates (never values)")
    s.add_argument("--subject", default=None)
    s = actions.add_parser("delete", help="forget (and revoke, for oauth2) a credential")
    s.add_argument("name")
    s.add_argument("--subject", required=True)


def _configs(args: argparse.Namespace) -> dict[str, CredentialConfig]:
    from toolpacks.host.config._load import load_config

    return dict(load_config(args.config).config.credentials)


def _config(args: argparse.Namespace) -> CredentialConfig:
    configs = _configs(args)
    if args.name not in configs:
        known = ", ".join(sorted(configs)) or "none"
        raise CliError(
            f"no [credentials.{args.name}] table in the configuration (defined: {known})",
            f'add [credentials.{args.name}] with kind = "secret" or kind = "oauth2"',
        )
    return configs[args.name]


def _store() -> SqliteCredentialStore:
    from toolpacks.host.credentials._store import CredentialStoreError, SqliteCredentialStore

    try:
        return SqliteCredentialStore()
    except CredentialStoreError as exc:
        raise CliError(str(exc)) from None


def cmd_credentials(args: argparse.Namespace) -> int:
    """``toolpacks credentials ACTION``."""
    action = args.action
    if action == "list":
        entries = _store().list(args.subject)
        for entry in entries:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.updated))
            print(f"{entry.name:<20} {entry.subject:<24} {when}")
        if not entries:
            print("no credentials stored" + (f" for {args.subject}" if args.subject else ""))
        return 0
    config = _config(args)
    if action == "set":
        if config.kind == "oauth2":
            raise CliError(
                f"{args.name} is an oauth2 credential",
                f"connect it with `toolpacks credentials login {args.name} --subject "
                f"{args.subject}`",
            )
        value = sys.stdin.read().rstrip("\r\n")
        if not value:
            raise CliError("no value on stdin", "pipe it in: ... | toolpacks credentials set ...")
        _store().set(args.name, args.subject, value)
        print(f"stored {args.name} for {args.subject}")
        return 0
    if action == "delete":
        return _delete(args, config)
    return _login(args, config)


def _delete(args: argparse.Namespace, config: CredentialConfig) -> int:
    store = _store()
    stored = store.get(args.name, args.subject)
    if stored is not None and config.kind == "oauth2":
        from toolpacks.host.credentials import _oauth

        try:
            _oauth.revoke(args.name, config, stored)
        except Exception as exc:  # revocation is a courtesy: forget it anyway
            print(f"warning: the server did not revoke it ({type(exc).__name__})", file=sys.stderr)
    if not store.delete(args.name, args.subject):
        raise CliError(f"no credential {args.name} stored for {args.subject}")
    print(f"deleted {args.name} for {args.subject}")
    return 0


def _login(args: argparse.Namespace, config: CredentialConfig) -> int:
    from toolpacks.host.credentials import _oauth

    if config.kind != "oauth2":
        raise CliError(
            f"{args.name} is a secret credential",
            f"set it with `toolpacks credentials set {args.name} --subject {args.subject}`",
        )
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer
    from urllib.parse import parse_qs, urlsplit

    got: dict[str, str] = {}
    done = threading.Event()

    class Callback(BaseHTTPRequestHandler):
        """The loopback redirect target: takes one ``?code=&state=`` and says so."""

        def do_GET(self) -> None:
            query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
            if "code" not in query and "error" not in query:
                self.send_error(404)
                return
            got.update(query)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.end_headers()
            self.wfile.write(b"Connected; you may close this window and return to the terminal.\n")
            done.set()

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the query holds the code."""

    server = HTTPServer(("127.0.0.1", args.port), Callback)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        redirect = f"http://127.0.0.1:{server.server_address[1]}/callback"
        pending = _oauth.begin(args.name, config, redirect)
        print(f"Open this URL to connect {args.name} for {args.subject}:\n{pending.url}")
        sys.stdout.flush()
        if not args.no_browser:
            import webbrowser

            webbrowser.open(pending.url)
        if not done.wait(args.timeout):
            raise CliError(f"no answer from the browser in {args.timeout:g} s")
    finally:
        server.shutdown()
        server.server_close()
    if got.get("state") != pending.state:
        raise CliError("the answer's state is not the one this login sent; nothing stored")
    if "error" in got:
        raise CliError(f"the authorization server refused: {got['error']}")
    try:
        stored = _oauth.finish(args.name, config, pending, got["code"])
    except _oauth.OAuthError as exc:
        raise CliError(str(exc)) from None
    _store().set(args.name, args.subject, stored)
    print(f"connected {args.name} for {args.subject}")
    return 0
