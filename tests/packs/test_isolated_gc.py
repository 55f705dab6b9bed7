"""``toolpacks gc`` removes only what nobody uses (issues 36 and 37).

Isolated environments are shared machine-wide. ``gc`` used to delete every environment its
configuration did not name once it was old enough — another project's, and one a running host
was using. Now it removes an environment only when it is not in the keep-list, has not been
used for the age given, no host holds it (a shared lock, held while a pack runs from it), no
builder holds its build lock, and no other configuration directory that used it still exists.
Environments here are directories in a test cache, with the markers real ones have; the
holding host and builder are real other processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolpacks.packs.isolated import _env
from toolpacks.packs.isolated._env import Env, environments, hold, remove_unused

DAY = 86400.0

HOLDER = """
import fcntl, sys
path, kind = sys.argv[1], sys.argv[2]
handle = open(path, "ab")
if kind == "build":
    from filelock import FileLock
    lock = FileLock(path)
    lock.acquire()
else:
    fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("TOOLPACKS_CACHE_DIR", str(root))
    (root / "envs").mkdir(parents=True)
    return root


def make_env(cache: Path, name: str, *, age_days: float, users: list[Path] = ()) -> Env:  # type: ignore[assignment]
    """A complete environment last used ``age_days`` ago, used by ``users`` directories."""
    root = cache / "envs" / name
    root.mkdir()
    marker = root / _env.MARKER
    marker.write_text(json.dumps({"requirement": name}), encoding="utf-8")
    then = time.time() - age_days * DAY
    os.utime(marker, (then, then))
    if users:
        record = {str(u.resolve()): then for u in users}
        (root / _env.USERS).write_text(json.dumps(record), encoding="utf-8")
    return Env(root, name)


@pytest.fixture
def holder() -> Iterator[list[subprocess.Popen[str]]]:
    """Other processes holding locks; released (stdin closed) at teardown."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(30)


def held_by_another_process(procs: list[subprocess.Popen[str]], path: Path, kind: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    procs.append(proc)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"


def names(envs: list[Env]) -> list[str]:
    return sorted(e.root.name for e in envs)


def test_an_old_unused_environment_of_this_project_is_removed(cache: Path, tmp_path: Path) -> None:
    here = tmp_path / "project"
    here.mkdir()
    make_env(cache, "mine", age_days=10, users=[here])
    make_env(cache, "orphan", age_days=10)
    removed = remove_unused([], 7 * DAY, base_dir=here)
    assert names(removed) == ["mine", "orphan"]
    assert environments() == []


def test_the_keep_list_and_the_age_threshold_are_honoured(cache: Path, tmp_path: Path) -> None:
    kept = make_env(cache, "named", age_days=30)
    make_env(cache, "recent", age_days=1)
    make_env(cache, "old", age_days=8)
    removed = remove_unused([kept], 7 * DAY, base_dir=tmp_path)
    assert names(removed) == ["old"]
    assert names(environments()) == ["named", "recent"]


def test_another_projects_environment_is_kept_while_that_project_exists(
    cache: Path, tmp_path: Path
) -> None:
    here, other, gone = tmp_path / "here", tmp_path / "other", tmp_path / "gone"
    here.mkdir()
    other.mkdir()
    make_env(cache, "shared", age_days=30, users=[here, other])
    make_env(cache, "theirs", age_days=30, users=[other])
    make_env(cache, "abandoned", age_days=30, users=[gone])
    removed = remove_unused([], 0.0, base_dir=here)
    assert names(removed) == ["abandoned"]
    assert names(environments()) == ["shared", "theirs"]


def test_an_environment_a_running_host_holds_is_kept(
    cache: Path, tmp_path: Path, holder: list[subprocess.Popen[str]]
) -> None:
    env = make_env(cache, "busy", age_days=30)
    make_env(cache, "idle", age_days=30)
    held_by_another_process(holder, env.root / _env.IN_USE, "use")
    removed = remove_unused([], 0.0, base_dir=tmp_path)
    assert names(removed) == ["idle"]
    assert env.root.is_dir()


def test_an_environment_being_built_is_kept(
    cache: Path, tmp_path: Path, holder: list[subprocess.Popen[str]]
) -> None:
    env = make_env(cache, "building", age_days=30)
    held_by_another_process(holder, Path(f"{env.root}.lock"), "build")
    assert remove_unused([], 0.0, base_dir=tmp_path) == []
    assert env.root.is_dir()


def test_hold_is_released_when_closed(cache: Path, tmp_path: Path) -> None:
    env = make_env(cache, "mounted", age_days=30)
    held = hold(env)
    assert held is not None
    try:
        child = subprocess.run(
            [
                sys.executable,
                "-c",
                "from toolpacks.packs.isolated import _env; import sys;"
                f"print(_env._held(_env.Env(__import__('pathlib').Path({str(env.root)!r}), '')))",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert child.stdout.strip() == "True"
    finally:
        held.close()
    assert names(remove_unused([], 0.0, base_dir=tmp_path)) == ["mounted"]
