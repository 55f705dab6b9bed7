"""The default credential store: one encrypted SQLite file under the state directory.

Each value is kept per (credential, subject), encrypted with AES-GCM (``cryptography``) under
a 256-bit key, with ``credential NUL subject`` as the associated data: a row copied to another
subject or credential does not decrypt. The key comes from ``TOOLPACKS_CREDENTIALS_KEY``
(URL-safe base64 of 32 bytes) or from a key file made beside the store (``0600``) on first
use. The store holds a check row encrypted with the key, so a wrong key fails closed with a
message instead of reading as an empty store; a corrupt row is reported for itself and the
other rows are still served.

The file is ``0600`` in a ``0700`` directory; SQLite in WAL mode with a busy timeout keeps
every write of several processes (``toolpacks credentials set`` in two terminals, several
HTTP workers refreshing tokens).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import secrets
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from toolpacks.exceptions import ToolpacksError

__all__ = [
    "KEY_ENV",
    "CorruptCredentialError",
    "CredentialStoreError",
    "SqliteCredentialStore",
    "StoredEntry",
    "state_dir",
]

KEY_ENV = "TOOLPACKS_CREDENTIALS_KEY"
"""The environment variable holding the store's key (URL-safe base64 of 32 bytes)."""
STATE_ENV = "TOOLPACKS_STATE_DIR"
"""Overrides the state directory (where ``credentials.db`` lives)."""
_CHECK = ("toolpacks", "key-check")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS credentials (
    name TEXT NOT NULL, subject TEXT NOT NULL, nonce BLOB NOT NULL, data BLOB NOT NULL,
    updated REAL NOT NULL, PRIMARY KEY (name, subject));
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY, nonce BLOB NOT NULL, data BLOB NOT NULL);
"""


class CredentialStoreError(ToolpacksError):
    """The credential store cannot be opened or used (a wrong key, an unreadable file)."""


class CorruptCredentialError(CredentialStoreError):
    """One stored value does not decrypt (damaged, or moved from another subject)."""


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """A stored credential, without its value (what ``list`` shows)."""

    name: str
    """The credential's name (``[credentials.NAME]``)."""
    subject: str
    """The principal it belongs to."""
    updated: float
    """When it was last set (seconds since the epoch)."""


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The per-user state directory of toolpacks (``TOOLPACKS_STATE_DIR`` overrides it).

    ``$XDG_STATE_HOME/toolpacks`` or ``~/.local/state/toolpacks`` on Linux.
    """
    env = os.environ if environ is None else environ
    if env.get(STATE_ENV):
        return Path(env[STATE_ENV])
    from platformdirs import user_state_dir

    return Path(user_state_dir("toolpacks", appauthor=False))


def _decode_key(text: str, where: str) -> bytes:
    try:
        key = base64.urlsafe_b64decode(text.strip().encode() + b"==")
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != 32:
        raise CredentialStoreError(
            f"{where} is not a credential store key: it must be URL-safe base64 of 32 bytes "
            '(make one with: python -c "import os,base64;'
            'print(base64.urlsafe_b64encode(os.urandom(32)).decode())")'
        )
    return key


def _key_file(path: Path) -> bytes:
    """The key in ``path``, made (``0600``, never overwritten) when missing."""
    with contextlib.suppress(FileExistsError):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(base64.urlsafe_b64encode(secrets.token_bytes(32)).decode() + "\n")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd) as held:
        return _decode_key(held.read(), str(path))


class SqliteCredentialStore:
    """Per-(credential, subject) values, encrypted, in one SQLite file.

    Args:
        directory: Where ``credentials.db`` (and the key file, if no key is given) live;
            the state directory by default. Made ``0700``; a link is refused.
        key: The 32-byte key, or None for ``TOOLPACKS_CREDENTIALS_KEY``, else the key file.

    Raises:
        CredentialStoreError: The key is malformed or does not open this store.
    """

    def __init__(self, directory: Path | None = None, *, key: bytes | None = None) -> None:
        from toolpacks.packs._statefiles import StateFileError, private_dir

        base = directory if directory is not None else state_dir()
        try:
            self.directory = private_dir(base)
        except (StateFileError, OSError) as exc:
            raise CredentialStoreError(f"the credential store cannot use {base}: {exc}") from exc
        self.path = self.directory / "credentials.db"
        if key is None:
            env = os.environ.get(KEY_ENV)
            key = (
                _decode_key(env, KEY_ENV) if env else _key_file(self.directory / "credentials.key")
            )
        try:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        except ImportError:  # pragma: no cover - depends on the extra
            raise CredentialStoreError(
                "the credential store needs cryptography: pip install 'toolpacks[credentials]'"
            ) from None
        self._aead = AESGCM(key)
        with contextlib.suppress(FileExistsError):  # made 0600 before SQLite writes to it
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        self._check_key()

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout = 30000")
            db.execute("PRAGMA journal_mode = WAL")
            db.executescript(_SCHEMA)
            yield db
        except sqlite3.DatabaseError as exc:
            raise CredentialStoreError(f"the credential store {self.path}: {exc}") from exc
        finally:
            db.close()
        for suffix in ("-wal", "-shm"):  # SQLite makes them with the process umask
            with contextlib.suppress(OSError):
                os.chmod(f"{self.path}{suffix}", 0o600)

    @staticmethod
    def _aad(name: str, subject: str) -> bytes:
        return f"{name}\0{subject}".encode()

    def _seal(self, name: str, subject: str, value: str) -> tuple[bytes, bytes]:
        nonce = secrets.token_bytes(12)
        return nonce, self._aead.encrypt(nonce, value.encode(), self._aad(name, subject))

    def _open(self, name: str, subject: str, nonce: bytes, data: bytes) -> str:
        from cryptography.exceptions import InvalidTag

        try:
            return self._aead.decrypt(nonce, data, self._aad(name, subject)).decode()
        except (InvalidTag, ValueError, UnicodeDecodeError) as exc:
            raise CorruptCredentialError(
                f"the stored credential {name!r} of subject {subject!r} does not decrypt "
                "(damaged, or copied from elsewhere); set it again with "
                f"`toolpacks credentials set {name} --subject {subject}`"
            ) from exc

    def _check_key(self) -> None:
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute("SELECT nonce, data FROM meta WHERE key = 'check'").fetchone()
            if row is None:
                nonce, data = self._seal(*_CHECK, "ok")
                db.execute("INSERT INTO meta VALUES ('check', ?, ?)", (nonce, data))
            db.execute("COMMIT")
        if row is not None:
            try:
                self._open(*_CHECK, row[0], row[1])
            except CorruptCredentialError:
                raise CredentialStoreError(
                    f"the key does not open the credential store {self.path}: it was made "
                    f"with another key. Set {KEY_ENV} (or restore credentials.key beside it) "
                    "to the key it was made with; nothing was read or changed"
                ) from None

    def get(self, name: str, subject: str) -> str | None:
        """The value of ``name`` for ``subject``, or None when there is none.

        Raises:
            CorruptCredentialError: The stored value does not decrypt.
        """
        with self._db() as db:
            row = db.execute(
                "SELECT CAST(nonce AS BLOB), CAST(data AS BLOB) FROM credentials "
                "WHERE name = ? AND subject = ?",
                (name, subject),
            ).fetchone()
        return None if row is None else self._open(name, subject, row[0], row[1])

    def set(self, name: str, subject: str, value: str) -> None:
        """Store ``value`` as ``name`` for ``subject`` (replacing any)."""
        nonce, data = self._seal(name, subject, value)
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO credentials VALUES (?, ?, ?, ?, ?)",
                (name, subject, nonce, data, time.time()),
            )

    def delete(self, name: str, subject: str) -> bool:
        """Remove ``name`` for ``subject``; whether there was one."""
        with self._db() as db:
            cur = db.execute(
                "DELETE FROM credentials WHERE name = ? AND subject = ?", (name, subject)
            )
            return cur.rowcount > 0

    def list(self, subject: str | None = None) -> list[StoredEntry]:
        """Names, subjects and dates (never values), sorted; one subject's if given."""
        query = "SELECT name, subject, updated FROM credentials"
        with self._db() as db:
            rows = (
                db.execute(query + " WHERE subject = ? ORDER BY name", (subject,)).fetchall()
                if subject is not None
                else db.execute(query + " ORDER BY subject, name").fetchall()
            )
        return [StoredEntry(n, s, u) for n, s, u in rows]
