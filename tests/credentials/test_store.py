"""The encrypted store and the ``toolpacks credentials`` commands."""

from __future__ import annotations

import base64
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolpacks.host.credentials._store import (
    CorruptCredentialError,
    CredentialStoreError,
    SqliteCredentialStore,
)

CONFIG = '[credentials.github]\nkind = "secret"\n\n[credentials.hub]\nkind = "oauth2"\n' + (
    'authorize_url = "https://example.invalid/a"\ntoken_url = "https://example.invalid/t"\n'
    'client_id = "toolpacks-test"\n'
)


def toolpacks(*args: str, stdin: str | None = None, cwd: Path | None = None) -> Any:
    """Run the real ``toolpacks`` command line in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "toolpacks", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )


def test_files_are_private(dirs: dict[str, Path]) -> None:
    """The directory is 0700, the database and the generated key file 0600."""
    store = SqliteCredentialStore()
    store.set("github", "alice", "v")
    assert stat.S_IMODE(dirs["state"].stat().st_mode) == 0o700
    for name in ("credentials.db", "credentials.key"):
        assert stat.S_IMODE((dirs["state"] / name).stat().st_mode) == 0o600, name


def test_a_wrong_key_fails_closed(dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Another key does not open the store: an error naming the fix, not an empty store."""
    SqliteCredentialStore().set("github", "alice", "ghp_alice")
    other = base64.urlsafe_b64encode(os.urandom(32)).decode()
    monkeypatch.setenv("TOOLPACKS_CREDENTIALS_KEY", other)
    with pytest.raises(CredentialStoreError, match="TOOLPACKS_CREDENTIALS_KEY"):
        SqliteCredentialStore()
    monkeypatch.setenv("TOOLPACKS_CREDENTIALS_KEY", "short")
    with pytest.raises(CredentialStoreError, match="32 bytes"):
        SqliteCredentialStore()


def test_a_row_moved_to_another_subject_does_not_decrypt(dirs: dict[str, Path]) -> None:
    """The (credential, subject) is bound to each value: a copied row is refused."""
    store = SqliteCredentialStore()
    store.set("github", "alice", "ghp_alice")
    with sqlite3.connect(store.path) as db:
        db.execute(
            "INSERT INTO credentials SELECT name, 'mallory', nonce, data, updated "
            "FROM credentials WHERE subject = 'alice'"
        )
    with pytest.raises(CorruptCredentialError, match="mallory"):
        store.get("github", "mallory")
    assert store.get("github", "alice") == "ghp_alice"


def test_a_corrupt_entry_is_reported_and_the_rest_served(dirs: dict[str, Path]) -> None:
    """A damaged row raises for itself; other rows, and listing, still work."""
    store = SqliteCredentialStore()
    store.set("github", "alice", "ghp_alice")
    store.set("github", "bob", "ghp_bob")
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE credentials SET data = x'00' || data WHERE subject = 'bob'")
    with pytest.raises(CorruptCredentialError, match="toolpacks credentials set github"):
        store.get("github", "bob")
    assert store.get("github", "alice") == "ghp_alice"
    assert [e.subject for e in store.list()] == ["alice", "bob"]


def test_cli_set_list_delete(dirs: dict[str, Path], plaintext_in: Any) -> None:
    """``set`` reads stdin, ``list`` shows names and dates only, ``delete`` forgets."""
    work = dirs["config"].parent / "work"
    (work / "toolpacks.toml").write_text(CONFIG, encoding="utf-8")
    done = toolpacks("credentials", "set", "github", "--subject", "alice", stdin="ghp_x_123\n")
    assert done.returncode == 0, done.stderr
    assert SqliteCredentialStore().get("github", "alice") == "ghp_x_123"
    listed = toolpacks("credentials", "list")
    assert "github" in listed.stdout
    assert "alice" in listed.stdout
    assert "ghp_x_123" not in listed.stdout + listed.stderr
    assert plaintext_in(list(dirs.values()), "ghp_x_123") == []
    assert toolpacks("credentials", "delete", "github", "--subject", "alice").returncode == 0
    assert SqliteCredentialStore().get("github", "alice") is None


def test_cli_refuses_what_it_cannot_do(dirs: dict[str, Path]) -> None:
    """An undefined name, an empty stdin and ``set`` of an oauth2 credential are refused."""
    work = dirs["config"].parent / "work"
    (work / "toolpacks.toml").write_text(CONFIG, encoding="utf-8")
    unknown = toolpacks("credentials", "set", "slack", "--subject", "a", stdin="x")
    assert unknown.returncode != 0
    assert "[credentials.slack]" in unknown.stderr
    empty = toolpacks("credentials", "set", "github", "--subject", "a", stdin="")
    assert empty.returncode != 0
    assert "stdin" in empty.stderr
    oauth = toolpacks("credentials", "set", "hub", "--subject", "a", stdin="x")
    assert oauth.returncode != 0
    assert "credentials login hub" in oauth.stderr


def test_sixteen_concurrent_sets_keep_all_sixteen(dirs: dict[str, Path]) -> None:
    """16 ``credentials set`` processes at once (one new store among them): none is lost."""
    work = dirs["config"].parent / "work"
    (work / "toolpacks.toml").write_text(CONFIG, encoding="utf-8")
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolpacks",
                "credentials",
                "set",
                "github",
                "--subject",
                f"u{i}",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(16)
    ]
    for i, proc in enumerate(procs):
        proc.stdin.write(f"value-{i}")  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
    for proc in procs:
        assert proc.wait(timeout=180) == 0, proc.stderr.read()  # type: ignore[union-attr]
    store = SqliteCredentialStore()
    assert {store.get("github", f"u{i}") for i in range(16)} == {f"value-{i}" for i in range(16)}
