"""Discovery of installed packs from metadata only: fake installs in temporary directories."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest

from toolpacks.packs.entrypoints import _discovery
from toolpacks.packs.entrypoints._discovery import (
    DISABLED_BY_CONFIG,
    DISABLED_BY_ENV,
    NOT_ALLOWED_BY_ENV,
    PackEntry,
    cache_file,
    discover,
    normalize,
    parse_entry_points,
    select,
)

SRC = Path(__file__).resolve().parents[1] / "src"


def install(
    site: Path,
    name: str,
    version: str = "1.0",
    packs: dict[str, str] | None = None,
    *,
    entry_points: str | None = None,
    suffix: str = "dist-info",  # or "egg-info" / "egg": PKG-INFO instead of METADATA
    dirname: str | None = None,
    metadata: bool = True,
) -> Path:
    """Write a fake installed distribution into ``site`` (as pip would, minus the code)."""
    escaped = name.replace("-", "_").replace(".", "_")
    meta_dir = site / (dirname or f"{escaped}-{version}.{suffix}")
    meta_dir.mkdir(parents=True)
    if metadata:
        header = "METADATA" if suffix == "dist-info" else "PKG-INFO"
        (meta_dir / header).write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nA description.\n",
            encoding="utf-8",
        )
    if entry_points is None and packs is not None:
        lines = "".join(f"{k} = {v}\n" for k, v in packs.items())
        entry_points = f"[console_scripts]\n{escaped} = {escaped}:main\n\n[toolpacks]\n{lines}"
    if entry_points is not None:
        (meta_dir / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    return meta_dir


def age(*dirs: Path) -> None:
    """Set directories' mtimes an hour back, as for an install that is not racy-fresh."""
    past = time.time() - 3600
    for d in dirs:
        os.utime(d, (past, past))


def names(found: _discovery.Discovery) -> list[tuple[str, str]]:
    return [(e.name, e.dist_name) for e in found.entries]


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    """The discovery cache directory the packs conftest's isolation points at."""
    return tmp_path / "cache"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    path = tmp_path / "site-packages"
    path.mkdir()
    return path


# -- finding packs ------------------------------------------------------------------------------


def test_finds_a_pack_with_name_version_value_and_location(site: Path) -> None:
    """An entry has pack name, module, normalized distribution name, version and path entry."""
    legacy_name = "TP.Greeter-0.1.0.dist-info"  # as old setuptools wrote it
    install(site, "TP.Greeter", "0.1.0", {"greeter": "tp_greeter"}, dirname=legacy_name)
    found = discover([str(site)])
    assert found.entries == (PackEntry("greeter", "tp_greeter", "tp-greeter", "0.1.0", str(site)),)
    assert found.clashes == {}
    assert found.problems == ()


def test_other_groups_and_distributions_without_entry_points_are_ignored(site: Path) -> None:
    """Only [toolpacks] counts: not console scripts, look-alike groups or plain distributions."""
    install(site, "plain")
    install(site, "tools", entry_points="[console_scripts]\ntp = x:y\n[toolpacks.extra]\nz = z\n")
    install(site, "tp-one", packs={"one": "tp_one"})
    assert names(discover([str(site)])) == [("one", "tp-one")]


def test_results_are_sorted_by_pack_then_distribution(site: Path) -> None:
    """Entries come sorted by pack name then distribution, whatever the install order."""
    install(site, "zeta", packs={"b": "zeta.b", "a": "zeta.a"})
    install(site, "alpha", packs={"c": "alpha.c"})
    install(site, "Mid", packs={"a": "mid.a"})
    found = discover([str(site)])
    assert names(found) == [("a", "mid"), ("a", "zeta"), ("b", "zeta"), ("c", "alpha")]


def test_default_path_is_sys_path_and_missing_entries_are_skipped(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default sys.path is scanned; missing entries are skipped; '' is the working directory."""
    install(site, "tp-one", packs={"one": "tp_one"})
    monkeypatch.chdir(site)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), ""])
    found = discover()
    assert [(e.name, e.location) for e in found.entries] == [("one", str(site))]


# -- clashes and shadowing ----------------------------------------------------------------------


def test_two_distributions_declaring_one_pack_name_are_both_reported(site: Path) -> None:
    """A pack name declared by two distributions is a clash listing both entries, sorted."""
    install(site, "tp-dup-two", packs={"dup": "two"})
    install(site, "tp-dup-one", packs={"dup": "one"})
    install(site, "tp-other", packs={"other": "other"})
    found = discover([str(site)])
    assert list(found.clashes) == ["dup"]
    assert [e.dist_name for e in found.clashes["dup"]] == ["tp-dup-one", "tp-dup-two"]
    assert names(found) == [("dup", "tp-dup-one"), ("dup", "tp-dup-two"), ("other", "tp-other")]


def test_clash_across_path_entries_is_reported(tmp_path: Path) -> None:
    """Different distributions in different path entries declaring one pack name also clash."""
    first, second = tmp_path / "a", tmp_path / "b"
    install(first, "tp-a", packs={"dup": "a"})
    install(second, "tp-b", packs={"dup": "b"})
    found = discover([str(first), str(second)])
    assert [(e.dist_name, e.location) for e in found.clashes["dup"]] == [
        ("tp-a", str(first)),
        ("tp-b", str(second)),
    ]


def test_same_distribution_later_on_the_path_is_shadowed_not_a_clash(tmp_path: Path) -> None:
    """The first copy of a distribution on the path wins, like importlib; later copies: shadowed."""
    first, second = tmp_path / "user", tmp_path / "venv"
    install(first, "tp-files", "2.0", {"files": "tp_files"})
    install(second, "tp-files", "1.0", {"files": "tp_files_old"})
    found = discover([str(first), str(second)])
    assert found.clashes == {}
    assert [(e.dist_version, e.location) for e in found.entries] == [("2.0", str(first))]
    assert [(e.dist_version, e.location) for e in found.shadowed] == [("1.0", str(second))]


def test_distribution_names_compare_pep503_normalized(tmp_path: Path) -> None:
    """'My.Pkg' shadows a later 'my_pkg', even when the earlier copy declares no pack."""
    first, second = tmp_path / "a", tmp_path / "b"
    install(first, "My.Pkg", "2.0", dirname="My.Pkg-2.0.dist-info")
    install(second, "my_pkg", "1.0", {"p": "my_pkg"})
    found = discover([str(first), str(second)])
    assert found.entries == ()
    assert [e.dist_name for e in found.shadowed] == ["my-pkg"]
    assert normalize("My__Pkg.-_x") == "my-pkg-x"


def test_duplicate_metadata_dirs_in_one_directory_resolve_deterministically(site: Path) -> None:
    """Two versions in one directory: the first in sorted order wins, the other is a problem."""
    install(site, "tp-x", "2.0", {"x": "new"})
    install(site, "tp-x", "1.0", {"x": "old"})
    found = discover([str(site)])
    assert [e.dist_version for e in found.entries] == ["1.0"]
    assert found.clashes == {}
    assert any("tp_x-2.0.dist-info ignored" in p for p in found.problems)


# -- metadata formats ---------------------------------------------------------------------------


def test_egg_info_directories_are_read_with_pkg_info(site: Path) -> None:
    """Egg-info directories count; PKG-INFO gives the version when the directory name has none."""
    legacy = "tp_legacy-0.5-py3.11.egg-info"
    install(site, "tp-legacy", "0.5", {"legacy": "tp_legacy"}, dirname=legacy, suffix="egg-info")
    install(site, "tp-dev", "0.1.dev0", {"dev": "tp_dev"}, dirname="tp_dev.egg-info", suffix="egg")
    (site / "oldstyle-1.0-py3.11.egg-info").write_text("Name: oldstyle\n", encoding="utf-8")
    found = discover([str(site)])
    assert [(e.name, e.dist_name, e.dist_version) for e in found.entries] == [
        ("dev", "tp-dev", "0.1.dev0"),
        ("legacy", "tp-legacy", "0.5"),
    ]


def test_egg_directory_on_the_path_is_read(tmp_path: Path) -> None:
    """A '.egg' directory on the path contributes the packs of its EGG-INFO."""
    egg = tmp_path / "tp_egg-3.0-py3.11.egg"
    install(egg, "tp-egg", "3.0", {"egg": "tp_egg"}, dirname="EGG-INFO", suffix="egg-info")
    found = discover([str(egg)])
    assert [(e.name, e.dist_name, e.dist_version) for e in found.entries] == [
        ("egg", "tp-egg", "3.0")
    ]


def test_version_comes_from_the_directory_name_else_from_metadata(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """METADATA is opened only when the directory name has no version; none at all is 'unknown'."""
    install(site, "tp-bare", "4.2", {"bare": "tp_bare"}, metadata=False)
    install(site, "tp-odd", "5.0", {"odd": "tp_odd"}, dirname="tp_odd.dist-info")
    install(site, "tp-none", "1", {"none": "tp_none"}, dirname="tp_none.dist-info", metadata=False)
    opened: list[str] = []
    real_read = _discovery._read

    def counting_read(path: str, until: bytes = b"") -> bytes:
        opened.append(Path(path).parent.name + "/" + Path(path).name)
        return real_read(path, until)

    monkeypatch.setattr(_discovery, "_read", counting_read)
    found = discover([str(site)], use_cache=False)
    assert [(e.dist_name, e.dist_version) for e in found.entries] == [
        ("tp-bare", "4.2"),
        ("tp-none", "unknown"),
        ("tp-odd", "5.0"),
    ]
    assert sorted(p for p in opened if not p.endswith("entry_points.txt")) == [
        "tp_none.dist-info/METADATA",
        "tp_odd.dist-info/METADATA",
    ]


def test_zip_file_on_the_path_is_read_through_importlib_metadata(tmp_path: Path) -> None:
    """Distributions inside a zip file on the path are found too."""
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("tp_zipped-1.5.dist-info/METADATA", "Name: tp-zipped\nVersion: 1.5\n\n")
        zf.writestr("tp_zipped-1.5.dist-info/entry_points.txt", "[toolpacks]\nzipped = tp_zipped\n")
    found = discover([str(archive)])
    assert found.entries == (PackEntry("zipped", "tp_zipped", "tp-zipped", "1.5", str(archive)),)


def test_file_on_the_path_that_is_not_a_zip_is_harmless(site: Path, tmp_path: Path) -> None:
    """A plain or damaged file on the path yields no distribution and no crash."""
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"PK\x03\x04 not really a zip")
    install(site, "tp-one", packs={"one": "tp_one"})
    assert names(discover([str(junk), str(site)])) == [("one", "tp-one")]


def test_malformed_entry_point_lines_are_skipped_and_reported(site: Path) -> None:
    """Broken [toolpacks] lines are skipped with a problem naming file and line; good ones count."""
    text = textwrap.dedent(
        """\
        # a comment
        [toolpacks]
        ; another comment
        not a pair
        = no_name
        no_module =
          good   =   tp_mixed.good
        good = tp_mixed.again
        [console_scripts]
        whatever
        """
    )
    install(site, "tp-mixed", entry_points=text)
    found = discover([str(site)])
    assert [(e.name, e.value) for e in found.entries] == [("good", "tp_mixed.good")]
    assert len(found.problems) == 4
    assert all("entry_points.txt: line" in p for p in found.problems)
    assert "line 4:" in found.problems[0]


def test_parse_entry_points_reads_one_section() -> None:
    """The hand parser keeps order, strips spaces, and reads section headers as importlib does."""
    text = "[toolpacks]\nb = mod.b:attr [extra]\na=mod.a\n[other]\nc = c\n[ toolpacks ]\nd = d\n"
    pairs, problems = parse_entry_points(text)
    assert pairs == [("b", "mod.b:attr [extra]"), ("a", "mod.a")]
    assert problems == []
    assert parse_entry_points("[toolpacks\nx = y\n")[1] == [
        "line 1: malformed section header '[toolpacks'"
    ]


# -- the cache ----------------------------------------------------------------------------------


def test_second_listing_comes_from_the_cache_without_reading_entry_points(
    site: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repeated listing is served by the cache: no entry_points.txt or METADATA is opened."""
    install(site, "tp-one", packs={"one": "tp_one"})
    age(site)
    first = discover([str(site)])
    assert not first.from_cache
    assert len(list(cache_dir.glob("discovery-*.json"))) == 1

    reads: list[str] = []
    real_read = _discovery._read

    def counting_read(path: str, until: bytes = b"") -> bytes:
        reads.append(path)
        return real_read(path, until)

    monkeypatch.setattr(_discovery, "_read", counting_read)
    second = discover([str(site)])
    assert second.from_cache
    assert second.entries == first.entries
    assert [Path(p).name for p in reads] == [Path(cache_file([str(site)])).name]


def test_cache_is_invalidated_when_a_distribution_is_added_or_removed(site: Path) -> None:
    """Adding or removing a dist-info directory changes its parent's mtime: no stale cache."""
    install(site, "tp-one", packs={"one": "tp_one"})
    age(site)
    discover([str(site)])
    added = install(site, "tp-two", packs={"two": "tp_two"})
    after_add = discover([str(site)])
    assert not after_add.from_cache
    assert names(after_add) == [("one", "tp-one"), ("two", "tp-two")]

    age(site)
    discover([str(site)])
    assert discover([str(site)]).from_cache
    shutil.rmtree(added)
    after_remove = discover([str(site)])
    assert not after_remove.from_cache
    assert names(after_remove) == [("one", "tp-one")]


def test_upgrade_replacing_the_dist_info_directory_is_seen(site: Path) -> None:
    """An upgrade (old dist-info removed, new one written) shows the new version, cache or not."""
    old = install(site, "tp-one", "1.0", {"one": "tp_one"})
    age(site)
    discover([str(site)])
    shutil.rmtree(old)
    install(site, "tp-one", "1.1", {"one": "tp_one"})
    assert [e.dist_version for e in discover([str(site)]).entries] == ["1.1"]


def test_recently_modified_entries_are_not_cached(site: Path) -> None:
    """A directory changed in the last seconds is not cached (a same-tick change could hide)."""
    install(site, "tp-one", packs={"one": "tp_one"})
    discover([str(site)])
    assert not discover([str(site)]).from_cache


def test_only_the_changed_path_entry_is_scanned_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two path entries, adding a distribution to one rescans that one only."""
    first, second = tmp_path / "a", tmp_path / "b"
    install(first, "tp-a", packs={"a": "a"})
    install(second, "tp-b", packs={"b": "b"})
    age(first, second)
    discover([str(first), str(second)])
    install(second, "tp-c", packs={"c": "c"})
    scanned: list[str] = []
    real_scan = _discovery._scan_dir

    def counting_scan(location: str, mtime: int | None) -> dict[str, Any]:
        scanned.append(location)
        return real_scan(location, mtime)

    monkeypatch.setattr(_discovery, "_scan_dir", counting_scan)
    found = discover([str(first), str(second)])
    assert scanned == [str(second)]
    assert [e.name for e in found.entries] == ["a", "b", "c"]


def framed(payload: bytes, fmt: int = 1) -> bytes:
    """A cache file as discovery writes it: JSON with a CRC-32 of the ``scans`` text."""
    return b'{"format":%d,"crc32":"%08x","scans":%s}' % (fmt, zlib.crc32(payload), payload)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"\xff\xfe\x00garbage", id="binary"),
        pytest.param(b'{"format":1,"crc32":"00000000","scans":{}}', id="bad-checksum"),
        pytest.param(framed(b"{}")[:-1], id="truncated"),
        pytest.param(framed(b"{not json"), id="bad-json"),
        pytest.param(framed(b"[]"), id="not-a-mapping"),
        pytest.param(framed(b"{}", fmt=99), id="other-format"),
        pytest.param(b"SHAPE", id="wrong-shape"),
    ],
)
def test_corrupt_cache_file_is_ignored(site: Path, content: bytes) -> None:
    """An unreadable, corrupt or wrongly shaped cache file is ignored and replaced, never fatal."""
    install(site, "tp-one", packs={"one": "tp_one"})
    age(site)
    location = str(site)
    if content == b"SHAPE":  # a valid checksum and the right mtime, but the wrong layout inside
        mtime = os.stat(site).st_mtime_ns
        bad = {"mtime": mtime, "others": [], "packs": [["k", 1, "v", []]], "problems": []}
        content = framed(json.dumps({location: bad}).encode())
    path = Path(cache_file([location]))
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    found = discover([location])
    assert not found.from_cache
    assert names(found) == [("one", "tp-one")]
    assert discover([location]).from_cache


def test_cache_file_altered_behind_its_checksum_is_not_trusted(site: Path) -> None:
    """A well-formed cache whose content no longer matches its CRC-32 is not used."""
    install(site, "tp-one", packs={"one": "tp_one"})
    age(site)
    discover([str(site)])
    path = Path(cache_file([str(site)]))
    path.write_bytes(path.read_bytes().replace(b'"one"', b'"six"'))
    found = discover([str(site)])
    assert not found.from_cache
    assert names(found) == [("one", "tp-one")]


def test_cache_files_unwritten_for_30_days_are_pruned(site: Path, cache_dir: Path) -> None:
    """Writing the cache removes other cache files older than 30 days, and nothing else."""
    cache_dir.mkdir()
    old, recent, other = (cache_dir / n for n in ("discovery-0ld.json", "discovery-new.json", "x"))
    for path in (old, recent, other):
        path.write_text("{}", encoding="utf-8")
    past = time.time() - 31 * 86400
    for path in (old, other):
        os.utime(path, (past, past))
    install(site, "tp-one", packs={"one": "tp_one"})
    age(site)
    discover([str(site)])
    assert sorted(p.name for p in cache_dir.iterdir()) == sorted(
        [Path(cache_file([str(site)])).name, "discovery-new.json", "x"]
    )


def test_unwritable_cache_directory_is_not_fatal(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the cache directory cannot be created, discovery still works, uncached."""
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("TOOLPACKS_CACHE_DIR", str(blocker / "cache"))
    install(site, "tp-one", packs={"one": "tp_one"})
    age(site)
    assert names(discover([str(site)])) == [("one", "tp-one")]
    assert not discover([str(site)]).from_cache


def test_no_cache_env_and_argument_disable_the_cache(
    site: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TOOLPACKS_NO_CACHE=1 and use_cache=False neither read nor write the cache file."""
    install(site, "tp-one", packs={"one": "tp_one"})
    age(site)
    monkeypatch.setenv("TOOLPACKS_NO_CACHE", "1")
    discover([str(site)])
    assert not discover([str(site)]).from_cache
    monkeypatch.delenv("TOOLPACKS_NO_CACHE")
    discover([str(site)], use_cache=False)
    assert not cache_dir.exists()
    discover([str(site)])
    assert not discover([str(site)], use_cache=False).from_cache


def test_cache_directory_follows_the_environment(tmp_path: Path) -> None:
    """The cache is in TOOLPACKS_CACHE_DIR, else $XDG_CACHE_HOME/toolpacks, else ~/.cache."""
    loc = ["/x"]
    own = cache_file(loc, {"TOOLPACKS_CACHE_DIR": "/own", "XDG_CACHE_HOME": "/xdg"})
    assert Path(own).parent == Path("/own")
    assert Path(cache_file(loc, {"XDG_CACHE_HOME": "/xdg"})).parent == Path("/xdg/toolpacks")
    home = Path(cache_file(loc, {})).parent
    assert home == Path(os.path.expanduser("~")) / ".cache" / "toolpacks"
    assert cache_file(["/a", "/b"], {}) != cache_file(["/b", "/a"], {})


# -- controls -----------------------------------------------------------------------------------


def test_select_without_controls_enables_everything() -> None:
    """With no configuration and no variables, every pack is enabled, sorted by name."""
    assert select(["b", "a"], environ={}) == {"a": None, "b": None}


def test_select_reports_why_each_pack_is_blocked() -> None:
    """Config, TOOLPACKS_DISABLE and the TOOLPACKS_PACKS allow-list each give a reason."""
    env = {"TOOLPACKS_DISABLE": " shell, web ,", "TOOLPACKS_PACKS": "files,shell,cfg"}
    verdicts = select(["files", "shell", "web", "cfg", "clock"], {"cfg"}, env)
    assert verdicts == {
        "cfg": DISABLED_BY_CONFIG,
        "clock": NOT_ALLOWED_BY_ENV,
        "files": None,
        "shell": DISABLED_BY_ENV,
        "web": DISABLED_BY_ENV,
    }


@pytest.mark.parametrize("value", ["", " ", ","])
def test_select_with_empty_allow_list_enables_none(value: str) -> None:
    """TOOLPACKS_PACKS set but empty loads no pack at all."""
    assert select(["a", "b"], environ={"TOOLPACKS_PACKS": value}) == {
        "a": NOT_ALLOWED_BY_ENV,
        "b": NOT_ALLOWED_BY_ENV,
    }


def test_select_accepts_entries_and_reads_os_environ(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries from discover() can be passed directly; the process environment is the default."""
    install(site, "tp-one", packs={"one": "tp_one", "two": "tp_two"})
    monkeypatch.setenv("TOOLPACKS_DISABLE", "two")
    assert select(discover([str(site)]).entries) == {"one": None, "two": DISABLED_BY_ENV}


# -- lightness ----------------------------------------------------------------------------------


def test_discovery_imports_no_pack_and_nothing_heavy(site: Path, tmp_path: Path) -> None:
    """Running discovery in a fresh interpreter imports no pack, pydantic, pluggy, or metadata."""
    install(site, "tp-bomb", packs={"bomb": "tp_bomb"})
    (site / "tp_bomb.py").write_text("raise SystemExit('imported!')\n", encoding="utf-8")
    code = textwrap.dedent(
        f"""\
        import json, sys
        import toolpacks.packs.entrypoints._discovery as d
        found = d.discover([{str(site)!r}], use_cache=False)
        heavy = ("pydantic", "pluggy", "importlib.metadata", "tp_bomb", "toolpacks.host._host")
        print(json.dumps({{
            "found": [e.name for e in found.entries],
            "imported": sorted(m for m in heavy if m in sys.modules),
        }}))
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(site)])}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert json.loads(out.stdout) == {"found": ["bomb"], "imported": []}
