"""Secrets: recognising them, and keeping them out of what is shown or sent.

Configuration values under secret-looking keys (and everything inside a table under such a
key), values read from the environment, token-like strings and passwords in URLs are
secrets; they are redacted wherever configuration is shown and scrubbed from error messages,
hook payloads and logs, in the forms a message is likely to hold them: as they are,
percent-encoded, base64 (also inside a longer base64 string), hex, and JSON- or
``repr``-escaped.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import quote

__all__ = [
    "MASK",
    "MIN_CORE_LEN",
    "MIN_ENCODED_LEN",
    "MIN_ENV_LEN",
    "REDACTED",
    "holds_secret",
    "is_secret_key",
    "is_secret_value",
    "redact",
    "redact_text",
    "scrub",
    "secret_values",
]

_SECRET_KEY = re.compile(
    r"(key|token|secret|passw(or)?d|passphrase|credential|authori[sz]ation|cookie)",
    re.IGNORECASE,
)
_SECRET_WORDS = frozenset(
    {"auth", "oauth", "authn", "authz", "session", "sessionid", "sid", "pwd", "pw", "creds"}
    | {"cred", "jwt", "otp", "totp", "mfa", "bearer"}
)
"""Words of a key (``x_auth``, ``sessionId``) that make it secret on their own."""
_KEY_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_TOKEN_PREFIX = r"sk-|sk_live_|rk_live_|ghp_|gho_|ghs_|github_pat_|glpat-|xox[abpr]-"
_SECRET_VALUE = re.compile(rf"^({_TOKEN_PREFIX}|AKIA|AIza|Bearer\s)")
_TOKEN_IN_TEXT = re.compile(
    rf"(?<![A-Za-z0-9_-])(?:{_TOKEN_PREFIX})[A-Za-z0-9_\-]{{6,}}"
    r"|(?<![A-Za-z0-9])(?:AKIA[A-Z0-9]{12,}|AIza[A-Za-z0-9_\-]{20,})"
    r"|\bBearer\s+(?=[A-Za-z0-9._~+/=\-]*\d)[A-Za-z0-9._~+/=\-]{8,}"
)
"""Token-shaped substrings of free text: a known prefix and a run of token characters, or
``Bearer`` and a credential (with a digit, so that prose about "Bearer tokens" stays)."""
_URL_USERINFO = re.compile(r"://[^/:@\s]*:(?P<password>[^/@\s]+)@")
"""What follows a URL's scheme when it holds a password; the scheme is found by
``_url_passwords`` (a regular expression trying every letter of a long run as the start of a
scheme took time quadratic in the run)."""
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
REDACTED = "****"
"""What a redacted configuration value is shown as."""
MASK = "**********"
"""What a secret is replaced by in messages, logs and hook payloads."""

MIN_ENCODED_LEN = 4
"""Secrets shorter than this are scrubbed only as they are (their encodings are too short
to tell from ordinary text)."""
MIN_CORE_LEN = 8
"""Shortest base64 fragment looked for when a secret may sit inside a longer base64 text."""
MIN_ENV_LEN = 4
"""Values read from the environment under an ordinary key count as secrets from this length
(``"1"`` or ``"eu"`` would mask every such character in a message)."""


def is_secret_key(key: str) -> bool:
    """Whether a setting's name suggests a secret.

    Names containing key, token, secret, password/passwd, passphrase, credential,
    authorization or cookie (``api_key``, ``private_key``, ``session_cookie``), and names
    with a word such as auth, oauth, session, sid, pwd, jwt or otp (``x-auth``,
    ``sessionId``).
    """
    if _SECRET_KEY.search(key):
        return True
    return any(word.lower() in _SECRET_WORDS for word in _KEY_WORD.findall(key))


def is_secret_value(value: str) -> bool:
    """Whether a string looks like a credential (a known token prefix, ``Bearer ...``)."""
    return bool(_SECRET_VALUE.match(value))


def _is_env_reference(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) <= {"env", "default"} and "env" in value


def redact(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of a configuration value with secret-looking entries replaced by ``"****"``.

    Hidden are: values under secret-looking keys and everything inside a table or list
    under one (``password = { user = ..., value = ... }``), strings that look like tokens,
    passwords in URLs (``postgres://user:****@host``), and ``secrets`` (values read from
    the environment, say) wherever a string holds them, encoded forms included.
    ``{ env = "NAME" }`` references are kept, since they name a variable rather than hold
    its value; their default is hidden under a secret-looking key.
    """
    return _redact(value, tuple(s for s in secrets if s), False)


def _redact(value: Any, secrets: tuple[str, ...], hidden: bool) -> Any:
    """``redact``; ``hidden`` is true inside a value under a secret-looking key."""
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            secret = hidden or is_secret_key(str(k))
            if isinstance(v, Mapping) and set(v) <= {"credential", "format"} and v:
                out[k] = dict(v)  # a header carrying a user's credential: a name and a format
            elif _is_env_reference(v):
                out[k] = {
                    ek: (
                        (REDACTED if secret else _redact(ev, secrets, False))
                        if ek == "default"
                        else ev
                    )
                    for ek, ev in v.items()
                }
            else:
                out[k] = _redact(v, secrets, secret)
        return out
    if isinstance(value, list | tuple):
        return [_redact(v, secrets, hidden) for v in value]
    if hidden:
        return REDACTED
    if isinstance(value, str):
        if is_secret_value(value):
            return REDACTED
        return redact_text(value, secrets, REDACTED, tokens=False)
    return value


def secret_values(value: Any, environ: Mapping[str, str] | None = None) -> list[str]:
    """The secret strings in a configuration value (to scrub from messages), without repeats.

    Strings under secret-looking keys (at any depth below one), token-like strings, and
    passwords in URLs. With ``environ``, ``{ env = "NAME" }`` references are resolved
    against it first, and every value read from it counts as a secret (from
    ``MIN_ENV_LEN`` characters, or any length under a secret-looking key); without it,
    references count only by their default.
    """
    out: list[str] = []
    if isinstance(value, Mapping) and isinstance(value.get("credentials"), Mapping):
        # ``[credentials.NAME]`` tables describe credentials (kinds, URLs, client ids); only
        # their secret-looking keys (``client_secret``) hold secrets, not every string there.
        _collect(value["credentials"], environ, False, out)
        value = {k: v for k, v in value.items() if k != "credentials"}
    _collect(value, environ, False, out)
    return list(dict.fromkeys(out))


def _collect(value: Any, environ: Mapping[str, str] | None, hidden: bool, out: list[str]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            secret = hidden or is_secret_key(str(k))
            if isinstance(v, Mapping) and set(v) <= {"credential", "format"} and v:
                continue  # a header carrying a user's credential: a name and a format only
            if _is_env_reference(v):
                name = v["env"]
                if environ is not None and isinstance(name, str) and name in environ:
                    found = environ[name]
                    if found and (secret or len(found) >= MIN_ENV_LEN):
                        out.append(found)
                    _collect(found, None, secret, out)
                elif "default" in v:
                    _collect(v["default"], environ, secret, out)
            else:
                _collect(v, environ, secret, out)
    elif isinstance(value, list | tuple):
        for v in value:
            _collect(v, environ, hidden, out)
    elif isinstance(value, str) and value:
        if hidden or is_secret_value(value):
            out.append(value)
        out.extend(value[start:end] for start, end in _url_passwords(value))


def _url_passwords(text: str) -> list[tuple[int, int]]:
    """Where the passwords of ``scheme://user:password@`` URLs in ``text`` are (linear time).

    A scheme is a letter then letters, digits, ``+``, ``.`` or ``-``, ending at ``://``: the
    run of those characters before ``://`` is walked back once, and its first letter starts
    the scheme (no letter: not a URL).
    """
    spans: list[tuple[int, int]] = []
    for match in _URL_USERINFO.finditer(text):
        start = match.start()
        while start > 0 and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        if any(c.isascii() and c.isalpha() for c in text[start : match.start()]):
            spans.append(match.span("password"))
    return spans


def scrub(text: str, secrets: Iterable[str], mask: str = MASK) -> str:
    """``text`` with every occurrence of each (non-empty) secret replaced by ``mask``.

    A secret of ``MIN_ENCODED_LEN`` characters or more is also found percent-encoded
    (``quote``/``quote_plus``, either hex case, or only partly encoded), in base64
    (standard or URL-safe, padded or not, alone or inside a longer base64 text), in hex
    (either case) and JSON- or ``repr``-escaped. The pattern for a tuple of secrets is built
    once and cached.
    """
    key = tuple(dict.fromkeys(s for s in secrets if s))
    if not key or not text:
        return text
    pattern = _pattern(key)
    return pattern.sub(lambda _: mask, text)


def holds_secret(text: str, secrets: Iterable[str]) -> bool:
    """Whether ``text`` holds one of ``secrets`` in any form ``scrub`` would replace."""
    key = tuple(dict.fromkeys(s for s in secrets if s))
    return bool(key and text) and _pattern(key).search(text) is not None


def redact_text(
    text: str, secrets: Iterable[str] = (), mask: str = REDACTED, *, tokens: bool = True
) -> str:
    """Free text (a message, a description) with secrets hidden for display.

    ``secrets`` are scrubbed (encoded forms included, see ``scrub``), then token-shaped
    substrings (``sk-...``, ``ghp_...``, ``Bearer ...``; unless ``tokens`` is false) and
    passwords in URLs are masked.
    """
    text = scrub(text, secrets, mask)
    if tokens:
        text = _TOKEN_IN_TEXT.sub(lambda _: mask, text)
    parts, last = [], 0
    for start, end in _url_passwords(text):
        parts += [text[last:start], mask]
        last = end
    return "".join([*parts, text[last:]])


_Token = tuple[str, int]
"""A regex atom matching one character of a secret in some form, and its longest match."""
_Trie = dict[_Token | None, "_Trie"]
_END = None
"""The key marking, in a trie node, that a form ends there."""


@lru_cache(maxsize=256)
def _pattern(secrets: tuple[str, ...]) -> re.Pattern[str]:
    """Every form of every secret, as one regex shaped like a trie.

    Shared prefixes are tested once; where forms diverge, the longer one is tried first.
    """
    root: _Trie = {}
    for secret in secrets:
        for tokens in _forms(secret):
            node = root
            for token in tokens:
                node = node.setdefault(token, {})
            node[_END] = {}
    return re.compile(_emit(root)[0])


def _emit(node: _Trie) -> tuple[str, int]:
    """The regex for the forms below ``node``, and the length of its longest match."""
    parts: list[str] = []
    total = 0
    while len(node) == 1 and _END not in node:  # a chain: no recursion for long secrets
        token, node = next(iter(node.items()))
        if token is not None:
            parts.append(token[0])
            total += token[1]
    branches: list[tuple[str, int]] = []
    for token, child in node.items():
        if token is not None:
            rest, weight = _emit(child)
            branches.append((token[0] + rest, token[1] + weight))
    if branches:
        branches.sort(key=lambda b: -b[1])
        parts.append(f"(?:{'|'.join(b for b, _ in branches)})" + ("?" if _END in node else ""))
        total += branches[0][1]
    return "".join(parts), total


def _forms(secret: str) -> list[list[_Token]]:
    """The forms of ``secret``, each a sequence of regex atoms."""
    if len(secret) < MIN_ENCODED_LEN:
        return [_literal(secret)]
    literals: set[str] = {
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],
    }
    data = secret.encode("utf-8", "surrogatepass")
    literals.add(repr(data)[2:-1])
    literals.update((data.hex(), data.hex().upper()))
    literals.update(_base64_forms(data))
    literals.discard(secret)
    return [*_percent_forms(secret), *(_literal(form) for form in sorted(literals) if form)]


def _literal(form: str) -> list[_Token]:
    return [(re.escape(char), 1) for char in form]


def _percent_forms(secret: str) -> list[list[_Token]]:
    """``secret`` with any of its characters percent-encoded, or not.

    Either hex case, and ``+`` for a space: raw, ``quote`` and ``quote_plus`` forms match.
    The first character's choices start separate forms, so that every form begins with a
    plain character and the regex engine can skip positions no form starts at.
    """
    tokens: list[_Token] = []
    starts: list[list[_Token]] = []
    for char in secret:
        try:
            encoded = quote(char, safe="")
        except UnicodeEncodeError:  # a lone surrogate
            encoded = char
        if encoded == char:
            tokens.append((re.escape(char), 1))
            continue
        if not tokens:
            starts = [[("%", 1), (_hex_insensitive(encoded[1:]), len(encoded) - 1)]]
            if char == " ":
                starts.append([(r"\+", 1)])
        options = [re.escape(char), _hex_insensitive(encoded)]
        if char == " ":
            options.append(r"\+")
        tokens.append((f"(?:{'|'.join(options)})", len(encoded)))
    if not starts:
        return [tokens]
    first = [(re.escape(secret[0]), 1)]
    return [first + tokens[1:], *(start + tokens[1:] for start in starts)]


def _hex_insensitive(encoded: str) -> str:
    """``%2F`` as a regex also matching ``%2f``."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in encoded)


def _base64_forms(data: bytes) -> set[str]:
    """Base64 forms of ``data``, in the standard and the URL-safe alphabet.

    Whole (padded or not) and, for each of the three byte alignments ``data`` can have inside
    a longer base64 text, the characters that do not depend on its neighbours (when at least
    ``MIN_CORE_LEN`` long).
    """
    whole = base64.b64encode(data).decode("ascii")
    forms = {whole, whole.rstrip("=")}
    for filler in range(3):
        encoded = base64.b64encode(b"\0" * filler + data).decode("ascii")
        start = -(-8 * filler // 6)  # characters holding bits of the filler
        end = 8 * (filler + len(data)) // 6  # the last holds bits of what follows
        core = encoded[start:end]
        if len(core) >= MIN_CORE_LEN:
            forms.add(core)
    forms |= {form.translate(_URLSAFE) for form in forms}
    return forms


_URLSAFE = str.maketrans("+/", "-_")
