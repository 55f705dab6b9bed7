"""State files: atomic writes, locked updates that lose nothing, directories only ours."""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from toolpacks.packs import _statefiles
from toolpacks.packs._statefiles import (
    StateFileError,
    atomic_write,
    cache_dir,
    config_dir,
    locked,
    private_dir,
    update_json,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX modes and owners")


def test_cache_dir_prefers_the_override_then_xdg(tmp_path: Path) -> None:
    """``TOOLPACKS_CACHE_DIR`` wins; otherwise XDG_CACHE_HOME (Linux) from the mapping given."""
    assert cache_dir({"TOOLPACKS_CACHE_DIR": str(tmp_path)}) == tmp_path
    if sys.platform.startswith("linux"):
        assert cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "toolpacks"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG is the Linux rule")
def test_config_dir_honours_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The configuration directory follows ``XDG_CONFIG_HOME`` as it always has."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_dir() == tmp_path / "toolpacks"


def test_atomic_write_replaces_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    """The file holds exactly the new data with the mode asked, and nothing else is left."""
    (tmp_path / "d").mkdir()
    target = tmp_path / "d" / "state.json"
    target.write_text("old", encoding="utf-8")
    atomic_write(target, "new", mode=0o600)
    assert target.read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in target.parent.iterdir()) == ["state.json"]
    if os.name == "posix":
        assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_concurrent_atomic_writes_never_share_a_temporary(tmp_path: Path) -> None:
    """Many threads writing one file at once all succeed (no fixed ``.tmp`` to collide on)."""
    target = tmp_path / "state"
    errors: list[BaseException] = []
    start = threading.Barrier(16)

    def write(n: int) -> None:
        start.wait(timeout=30)
        try:
            for _ in range(20):
                atomic_write(target, f"writer {n}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert target.read_text(encoding="utf-8").startswith("writer ")


ADD_KEY = """
import sys
from pathlib import Path
from toolpacks.packs._statefiles import update_json
update_json(Path(sys.argv[1]), lambda data: {**data, sys.argv[2]: True})
"""


def test_sixteen_processes_updating_one_file_keep_every_entry(tmp_path: Path) -> None:
    """16 concurrent read-modify-writes from separate processes: all 16 keys are kept."""
    import subprocess

    target = tmp_path / "shared.json"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", ADD_KEY, str(target), f"k{n}"], stderr=subprocess.PIPE
        )
        for n in range(16)
    ]
    done = [(p, p.communicate(timeout=120)[1]) for p in procs]
    errors = [err for p, err in done if p.returncode != 0]
    assert errors == []
    assert sorted(json.loads(target.read_text(encoding="utf-8"))) == sorted(
        f"k{n}" for n in range(16)
    )


def test_update_json_refuses_to_overwrite_what_it_cannot_read(tmp_path: Path) -> None:
    """A file that is not a JSON object is reported, not replaced by the change."""
    target = tmp_path / "state.json"
    target.write_text("{not json", encoding="utf-8")
    with pytest.raises(StateFileError, match="not valid JSON"):
        update_json(target, lambda data: {"x": 1})
    assert target.read_text(encoding="utf-8") == "{not json"


@pytest.mark.parametrize("text", ["[1, 2]", '"text"', "null", "3"])
def test_update_json_refuses_valid_json_that_is_not_an_object(tmp_path: Path, text: str) -> None:
    """Valid JSON of another kind (a list, text, null) is kept as it is, not overwritten."""
    target = tmp_path / "state.json"
    target.write_text(text, encoding="utf-8")
    with pytest.raises(StateFileError, match="does not hold a JSON object"):
        update_json(target, lambda data: {"x": 1})
    assert target.read_text(encoding="utf-8") == text


def test_update_json_accepts_in_place_changes(tmp_path: Path) -> None:
    """A change returning ``None`` has its in-place edits written."""
    target = tmp_path / "state.json"
    assert update_json(target, lambda data: data.update(a=1)) == {"a": 1}
    assert json.loads(target.read_text(encoding="utf-8")) == {"a": 1}


def test_a_held_lock_times_out_with_a_clear_error(tmp_path: Path) -> None:
    """A second holder waits at most ``timeout`` and is then told who holds the lock."""
    target = tmp_path / "state.json"
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with locked(target):
            held.set()
            release.wait(timeout=60)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(timeout=30)
        with pytest.raises(StateFileError, match="locked by another toolpacks process"):
            update_json(target, lambda data: data, timeout=0.05)
    finally:
        release.set()
        holder.join(timeout=30)


@posix_only
def test_private_dir_creates_every_missing_level_owner_only(tmp_path: Path) -> None:
    """Missing directories, parents included, are created 0700."""
    made = private_dir(tmp_path / "a" / "b" / "c")
    for level in (tmp_path / "a", tmp_path / "a" / "b", made):
        assert stat.S_IMODE(level.stat().st_mode) == 0o700


@posix_only
def test_private_dir_tightens_a_loose_directory_of_ours(tmp_path: Path) -> None:
    """An existing directory of ours readable by others is narrowed to 0700."""
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o755)
    private_dir(loose)
    assert stat.S_IMODE(loose.stat().st_mode) == 0o700


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_private_dir_refuses_a_symbolic_link(tmp_path: Path) -> None:
    """A link in place of the directory is refused, even one pointing at our own directory."""
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    with pytest.raises(StateFileError, match="symbolic link"):
        private_dir(link)


@posix_only
def test_private_dir_refuses_someone_elses_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory owned by another user is refused and left as it is."""
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    theirs.chmod(0o755)
    real_uid = os.geteuid()
    monkeypatch.setattr(_statefiles.os, "geteuid", lambda: real_uid + 1)
    with pytest.raises(StateFileError, match="not to you"):
        private_dir(theirs)
    assert stat.S_IMODE(theirs.stat().st_mode) == 0o755


def test_private_dir_refuses_a_file(tmp_path: Path) -> None:
    """A regular file where the directory should be is refused."""
    (tmp_path / "f").write_text("", encoding="utf-8")
    with pytest.raises(StateFileError, match="not a directory"):
        private_dir(tmp_path / "f")


def _discover_in(site: Path) -> object:
    from toolpacks.packs.entrypoints._discovery import discover

    return discover([str(site)])


@posix_only
def test_the_discovery_cache_is_the_users_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Discovery creates its cache directory 0700 and writes its file 0600."""
    cache = tmp_path / "fresh-cache"
    monkeypatch.setenv("TOOLPACKS_CACHE_DIR", str(cache))
    site = tmp_path / "site"
    site.mkdir()
    os.utime(site, ns=(1, 1))  # old enough to be cached
    _discover_in(site)
    files = list(cache.iterdir())
    assert [f.name.startswith("discovery-") for f in files] == [True]
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_discovery_neither_reads_nor_writes_a_linked_cache_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache directory that is a link (someone else's place) is ignored: no planted pack."""
    from toolpacks.packs.entrypoints import _discovery

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "linked-cache"
    link.symlink_to(elsewhere, target_is_directory=True)
    monkeypatch.setenv("TOOLPACKS_CACHE_DIR", str(link))
    site = tmp_path / "site"
    site.mkdir()
    os.utime(site, ns=(1, 1))
    location = os.path.abspath(site)
    planted = _discovery._empty(site.stat().st_mtime_ns)
    planted["packs"].append(["evil-dist", "1.0", [["evil", "evil_module"]]])
    payload = json.dumps({location: planted}, separators=(",", ":")).encode()
    target = Path(_discovery.cache_file([location]))
    (elsewhere / target.name).write_bytes(_discovery._frame(payload))
    found = _discover_in(site)
    assert [e.name for e in found.entries] == []  # type: ignore[attr-defined]
    assert [p.name for p in elsewhere.iterdir()] == [target.name]


def test_sixteen_concurrent_lock_writers_all_succeed(tmp_path: Path, pack_of: Any) -> None:
    """16 threads writing one lock file over and over: none crashes, the file is whole."""
    from toolpacks import Host, tool
    from toolpacks.host._lockfile import write_lock

    @tool
    def hello() -> str:
        """Say hello."""
        return "hello"

    host = Host({}, discover=False)
    host.add_pack(pack_of(hello), "greeter")
    target = tmp_path / "toolpacks.lock"
    errors: list[BaseException] = []
    start = threading.Barrier(16)

    def write() -> None:
        start.wait(timeout=30)
        try:
            for _ in range(10):
                write_lock(host, target)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert list(json.loads(target.read_text(encoding="utf-8"))["packs"]) == ["greeter"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "work") == ["toolpacks.lock"]
