"""The trust store keeps every entry under concurrent writers; fingerprints read safely."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from toolpacks.packs import _trust
from toolpacks.packs._trust import fingerprint, is_trusted, trust, trust_store_path, untrust


def test_sixteen_concurrent_trust_commands_keep_all_sixteen(tmp_path: Path) -> None:
    """16 ``toolpacks trust`` processes at once, one store: all succeed, all 16 are kept."""
    store = tmp_path / "state" / "trusted.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLPACKS_", "PYTHON"))}
    env["TOOLPACKS_TRUST_FILE"] = str(store)
    env["TOOLPACKS_CACHE_DIR"] = str(tmp_path / "cache")
    configs = []
    for n in range(16):
        config = tmp_path / f"project{n}" / "toolpacks.toml"
        config.parent.mkdir()
        config.write_text(f'[packs.p{n}]\nsetting = "{n}"\n', encoding="utf-8")
        configs.append(config)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "toolpacks", "trust", str(config)],
            cwd=config.parent,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for config in configs
    ]
    errors = []
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        if proc.returncode != 0:
            errors.append(err)
    assert errors == []
    kept = json.loads(store.read_text(encoding="utf-8"))
    assert sorted(kept) == sorted(str(c.resolve()) for c in configs)


def test_trust_and_untrust_round_trip_in_a_private_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trust is recorded, read back, withdrawn; the store is the user's only."""
    monkeypatch.setenv("TOOLPACKS_TRUST_FILE", str(tmp_path / "cfg" / "trusted.json"))
    config = tmp_path / "toolpacks.toml"
    config.write_text("", encoding="utf-8")
    trust(config, "abc")
    assert is_trusted(config, "abc")
    assert not is_trusted(config, "other")
    if os.name == "posix":
        assert trust_store_path().stat().st_mode & 0o077 == 0
        assert trust_store_path().parent.stat().st_mode & 0o077 == 0
    assert untrust(config)
    assert not is_trusted(config, "abc")
    assert not untrust(config)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG is the Linux rule")
def test_the_store_follows_xdg_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the override the store lives in the XDG configuration directory."""
    monkeypatch.delenv("TOOLPACKS_TRUST_FILE", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert trust_store_path() == tmp_path / "toolpacks" / "trusted.json"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_fingerprint_does_not_open_a_named_pipe(tmp_path: Path) -> None:
    """A pipe among the covered files is fingerprinted by kind, never read (it would block)."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    done: list[str] = []
    worker = threading.Thread(
        target=lambda: done.append(fingerprint("d", [pipe], tmp_path)), daemon=True
    )
    worker.start()
    worker.join(timeout=20)
    blocked = not done
    if blocked:  # unblock the reader so the thread can end, then fail
        fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        worker.join(timeout=20)
    assert not blocked, "fingerprint blocked reading a named pipe"
    assert done[0] != fingerprint("d", [], tmp_path)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_fingerprint_does_not_read_a_link_to_an_endless_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link to ``/dev/zero`` costs nothing: devices are not read."""
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    read: list[object] = []
    real_open = os.open

    def watching_open(path: object, *args: object, **kwargs: object) -> int:
        read.append(path)
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(_trust.os, "open", watching_open)
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail(f"read {self} whole"))
    fingerprint("d", [link], tmp_path)
    assert read == []


def test_fingerprint_reads_a_bounded_amount_yet_sees_changes_past_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the bound a file is not read, but its size and time still change the fingerprint."""
    monkeypatch.setattr(_trust, "MAX_FILE_BYTES", 8)
    big = tmp_path / "big.py"
    big.write_bytes(b"0123456789abcdef")
    first = fingerprint("d", [big], tmp_path)
    reads: list[int] = []
    real_read = os.read
    monkeypatch.setattr(_trust.os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    assert fingerprint("d", [big], tmp_path) == first
    assert sum(reads) <= 8 + 1
    big.write_bytes(b"0123456789abcdefXYZ")
    assert fingerprint("d", [big], tmp_path) != first


def test_fingerprint_still_hashes_small_regular_files(tmp_path: Path) -> None:
    """A change of content under the bound changes the fingerprint; a missing file counts."""
    code = tmp_path / "code.py"
    code.write_text("a = 1\n", encoding="utf-8")
    first = fingerprint("d", [code], tmp_path)
    code.write_text("a = 2\n", encoding="utf-8")
    second = fingerprint("d", [code], tmp_path)
    code.unlink()
    assert len({first, second, fingerprint("d", [code], tmp_path)}) == 3


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_store_in_a_linked_directory_trusts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default store's directory must be the user's own; a link there is not believed."""
    monkeypatch.delenv("TOOLPACKS_TRUST_FILE", raising=False)
    monkeypatch.setattr(_trust, "config_dir", lambda: tmp_path / "cfg")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "cfg").symlink_to(elsewhere, target_is_directory=True)
    config = tmp_path / "toolpacks.toml"
    (elsewhere / "trusted.json").write_text(
        json.dumps({str(config.resolve()): "planted"}), encoding="utf-8"
    )
    assert not is_trusted(config, "planted")
    with pytest.raises(OSError, match="symbolic link"):
        trust(config, "mine")
