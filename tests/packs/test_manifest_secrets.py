"""Manifests keep no secret, serve no other environment, and never skip a pack's hooks.

A manifest is a cache of tool definitions written beside the user's other state. A definition
that holds the value of a secret setting (a token read from the environment, in any encoding)
is never written there, and what one environment's values built is never listed to another.
The cache directory is the user's only. Packs whose hooks (``authorize`` included) apply to
every call are imported, never listed, and hooks that appear after a manifest was written
withhold the listed tools. Every component of a manifest's key and path is pinned here: drop
one and a test below fails.
"""

from __future__ import annotations

import base64
import gc
import json
import logging
import os
import stat
import sys
import textwrap
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from toolpacks import Host
from toolpacks.core._secrets import scrub
from toolpacks.packs.entrypoints import _manifest
from toolpacks.packs.entrypoints._manifest import Manifests, installed, manifest_dir, shippable
from toolpacks.packs.entrypoints._manifest_tool import ManifestTool
from toolpacks.testing import call

from .test_manifests import Site, body_of, manifest_files, only_manifest, pack_source, site

__all__ = ["site"]  # the fixture, imported for the tests below

TOKEN_A = "tok-Alpha-7f3e9c21"
TOKEN_B = "tok-Bravo-0d5a8b64"

SETTING_PACK = """
    import base64
    from urllib.parse import quote

    from toolpacks import hookimpl, tool

    SHOWN = {{
        "plain": lambda v: v,
        "base64": lambda v: base64.b64encode(v.encode()).decode(),
        "quoted": lambda v: quote(v, safe=""),
    }}

    @hookimpl
    def register_tools(register):
        value = str(register.config.get("{key}", "none"))
        shown = SHOWN[register.config.get("form", "plain")](value)

        @tool(description=f"Call the API (as {{shown}}).")
        def api(endpoint: str = "/" + shown) -> str:
            return "called " + endpoint

        @tool
        def fail() -> str:
            '''Fails, quoting the setting.'''
            raise RuntimeError("rejected: " + str(register.config.get("token")))

        register(api)
        register(fail)
"""
"""A pack whose tool definition quotes one of its settings (description and default)."""


def setting_pack(key: str = "token") -> str:
    return textwrap.dedent(SETTING_PACK.format(key=key))


def cache_text() -> str:
    """Everything written under the test's cache directory, as text."""
    root = Path(os.environ["TOOLPACKS_CACHE_DIR"])
    files = [p for p in root.rglob("*") if p.is_file()]
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in files)


def env_config(key: str = "token", form: str = "plain") -> dict[str, Any]:
    return {"packs": {"hello": {key: {"env": "TPM_TOKEN"}, "form": form}}}


# -- secrets never reach the cache --------------------------------------------------------------


@pytest.mark.parametrize("form", ["plain", "base64", "quoted"])
def test_a_secret_in_a_definition_is_never_written_to_the_cache(
    site: Site, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    """A definition quoting a setting read from the environment (in any form) is not cached."""
    site.install("tpm_secret", setting_pack())
    monkeypatch.setenv("TPM_TOKEN", TOKEN_A)
    toolset = site.host(env_config(form=form)).toolset()
    assert toolset.get("api").description != "Call the API (as none)."  # the pack saw it
    text = cache_text()
    assert scrub(text, [TOKEN_A]) == text, "a form of the secret is in the cache"
    assert TOKEN_A not in text


def test_a_literal_secret_setting_is_never_written_to_the_cache(site: Site) -> None:
    """A secret written in the configuration (under a secret-looking key) is not cached either."""
    site.install("tpm_literal", setting_pack("api_key"))
    config = {"packs": {"hello": {"api_key": TOKEN_A}}}
    site.host(config).toolset()
    assert TOKEN_A not in cache_text()
    site.host(config).toolset()
    assert "tpm_literal" in sys.modules  # not listed: imported again


def test_a_pack_whose_definition_holds_no_secret_is_still_cached(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refusing is per definition: a pack reading a token it does not show is listed lazily."""
    site.install("tpm_quiet", setting_pack("other"))
    monkeypatch.setenv("TPM_TOKEN", TOKEN_A)
    site.host(env_config()).toolset()
    listed = site.host(env_config()).toolset()
    assert "tpm_quiet" not in sys.modules
    assert isinstance(listed.get("api"), ManifestTool)
    assert TOKEN_A not in cache_text()


def test_another_environment_is_never_shown_the_first_ones_definition(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second environment with another token sees its own definition, never the first's."""
    site.install("tpm_twoenv", setting_pack())
    monkeypatch.setenv("TPM_TOKEN", TOKEN_A)
    site.host(env_config()).toolset()
    monkeypatch.setenv("TPM_TOKEN", TOKEN_B)
    toolset = site.host(env_config()).toolset()
    shown = json.dumps(toolset.definitions("openai"))
    assert TOKEN_A not in shown
    assert toolset.get("api").description == f"Call the API (as {TOKEN_B})."


def test_short_environment_values_key_the_manifest(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value too short to be a secret (``eu``) still keys the manifest: ``us`` sees its own."""
    site.install("tpm_region", setting_pack("region"))
    config = env_config("region")
    monkeypatch.setenv("TPM_TOKEN", "eu")
    site.host(config).toolset()
    monkeypatch.setenv("TPM_TOKEN", "us")
    assert site.host(config).toolset().get("api").description == "Call the API (as us)."
    monkeypatch.setenv("TPM_TOKEN", "eu")
    listed = site.host(config).toolset()
    assert "tpm_region" not in sys.modules  # each value has its own, listed lazily
    assert listed.get("api").description == "Call the API (as eu)."


def test_an_entry_that_now_quotes_a_secret_is_dropped(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When a definition starts quoting a secret, its earlier entry is dropped, not served."""
    source = setting_pack().replace(
        'value = str(register.config.get("token", "none"))',
        'value = str(register.config["token"] if os.environ.get("TPM_SHOW") else "x")',
    )
    site.install("tpm_drop", "import os\n" + source)
    monkeypatch.setenv("TPM_TOKEN", TOKEN_A)
    site.host(env_config()).toolset()  # shows "x": cached
    assert body_of(only_manifest())["packs"]
    monkeypatch.setenv("TPM_SHOW", "1")
    listed = site.host(env_config()).toolset()
    assert call(listed, "api", {}).is_error  # withheld: the import shows something else
    assert body_of(only_manifest())["packs"] == {}
    assert TOKEN_A not in cache_text()
    rebuilt = site.host(env_config()).toolset()
    assert rebuilt.get("api").description == f"Call the API (as {TOKEN_A})."


def test_a_listed_pack_scrubs_its_secrets_from_call_errors(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pack listed from its manifest knows its secrets: its tools' errors are scrubbed."""
    site.install("tpm_listed", setting_pack("other"))
    config: dict[str, Any] = {
        "packs": {"hello": {"token": {"env": "TPM_TOKEN"}}},
        "settings": {"expose_errors": True},
    }
    monkeypatch.setenv("TPM_TOKEN", TOKEN_A)
    site.host(config).toolset()
    toolset = site.host(config).toolset()
    assert "tpm_listed" not in sys.modules
    result = call(toolset, "fail", {})
    assert result.is_error
    assert "rejected" in result.content
    assert TOKEN_A not in result.content


def test_a_listed_pack_scrubs_its_secrets_from_log_records(
    site: Site, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A pack never imported in this process still masks its secrets in toolpacks' logs."""
    site.install("tpm_logged", setting_pack("other"))
    config = {"packs": {"hello": {"token": {"env": "TPM_TOKEN"}}}}
    monkeypatch.setenv("TPM_TOKEN", TOKEN_B)
    site.host(config).toolset()
    gc.collect()  # the importing host, and the secrets it knew, are gone
    host = site.host(config)
    host.toolset()
    assert "tpm_logged" not in sys.modules
    with caplog.at_level(logging.INFO, logger="toolpacks.listed"):
        logging.getLogger("toolpacks.listed").info("calling with %s", TOKEN_B)
    assert TOKEN_B not in caplog.text
    assert "calling with" in caplog.text


# -- the cache directory is the user's only ----------------------------------------------------


def test_manifests_are_private_files_in_a_private_directory(site: Site) -> None:
    """The manifest directory is 0700 and each manifest 0600: no other user reads them."""
    site.install("tpm_modes", pack_source())
    site.host().toolset()
    path = only_manifest()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700


def test_a_loose_cache_directory_is_tightened(site: Site) -> None:
    """A cache directory of ours left group- or world-readable is made 0700 before use."""
    site.install("tpm_loose", pack_source())
    directory = Path(os.environ["TOOLPACKS_CACHE_DIR"]) / "manifests"
    directory.mkdir(parents=True, mode=0o755)
    directory.chmod(0o755)
    site.host().toolset()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700


@pytest.mark.parametrize("link", ["cache", "manifests"])
def test_a_symlinked_cache_directory_is_refused_and_the_host_still_works(
    site: Site,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    link: str,
) -> None:
    """A link in place of the cache (or its manifests) directory: no cache, said once, tools run."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "manifests").mkdir(parents=True)
    cache = tmp_path / "linked-cache"
    if link == "cache":
        cache.symlink_to(elsewhere, target_is_directory=True)
    else:
        cache.mkdir()
        (cache / "manifests").symlink_to(elsewhere / "manifests", target_is_directory=True)
    monkeypatch.setenv("TOOLPACKS_CACHE_DIR", str(cache))
    site.install("tpm_link", pack_source())
    with caplog.at_level(logging.WARNING, logger="toolpacks"):
        toolset = site.host().toolset()
        site.host().toolset()  # another host of the process: not said again
    assert call(toolset, "count", {"words": ["a"]}).value == 1
    assert list((elsewhere / "manifests").iterdir()) == []
    refusals = [r for r in caplog.records if "symbolic link" in r.getMessage()]
    assert len(refusals) == 1, caplog.text
    assert "manifest" in refusals[0].getMessage()


def test_a_planted_manifest_in_a_refused_directory_is_not_read(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Manifests found through a refused (linked) directory are not listed either."""
    site.install("tpm_planted", pack_source("Greet someone."))
    site.host().toolset()  # a valid manifest in the real directory
    real = Path(os.environ["TOOLPACKS_CACHE_DIR"])
    linked = tmp_path / "linked"
    linked.symlink_to(real, target_is_directory=True)
    monkeypatch.setenv("TOOLPACKS_CACHE_DIR", str(linked))
    site.host().toolset()
    assert "tpm_planted" in sys.modules


# -- hooks are never skipped -------------------------------------------------------------------


AUTHORIZE_ONLY = """

    @hookimpl
    def authorize(tool, arguments, context):
        return "deny" if tool.name == "count" else None
"""


def test_a_pack_with_only_an_authorize_hook_is_always_imported(site: Site) -> None:
    """``authorize`` applies to every call: such a pack is imported and its hook runs."""
    site.install("tpm_authz", pack_source() + textwrap.dedent(AUTHORIZE_ONLY))
    site.host().toolset()
    (variant,) = body_of(only_manifest())["packs"].values()
    assert variant["hooks"] is True
    toolset = site.host().toolset()
    assert "tpm_authz" in sys.modules
    denied = call(toolset, "count", {"words": []})
    assert denied.is_error
    assert call(toolset, "greet", {"name": "Ada"}).value == "Hello, Ada!"


def test_a_shipped_manifest_records_an_authorize_only_pack_as_hooked(site: Site) -> None:
    """``shippable`` marks an ``authorize``-only pack as having hooks, so it is never listed."""
    site.install("tpm_shipauthz", pack_source() + textwrap.dedent(AUTHORIZE_ONLY))
    loaded = Host({}, path=[str(site.root)]).load("hello")
    (variant,) = shippable(loaded)["packs"].values()
    assert variant["hooks"] is True


LATE_HOOKS = {
    "before_invoke": """

        if os.environ.get("TPM_HOOKS"):
            @hookimpl
            def before_invoke(tool, arguments, context):
                raise RuntimeError("the hook ran")
    """,
    "authorize": """

        if os.environ.get("TPM_HOOKS"):
            @hookimpl
            def authorize(tool, arguments, context):
                return "deny"
    """,
    "toolpacks_ranker": """

        if os.environ.get("TPM_HOOKS"):
            @hookimpl
            def toolpacks_ranker():
                return object()
    """,
}


@pytest.mark.parametrize("hook", sorted(LATE_HOOKS))
def test_hooks_that_appear_after_the_manifest_withhold_listed_tools(
    site: Site, monkeypatch: pytest.MonkeyPatch, hook: str
) -> None:
    """A listed pack that now implements hooks: its tools are withheld, never run hookless."""
    site.install("tpm_late", pack_source() + textwrap.dedent(LATE_HOOKS[hook]))
    site.host().toolset()
    monkeypatch.setenv("TPM_HOOKS", "1")
    toolset = site.host().toolset()
    assert isinstance(toolset.get("count"), ManifestTool)
    result = call(toolset, "count", {"words": ["a"]})
    assert result.is_error
    assert "hooks" in result.content
    assert "withheld" in result.content


# -- what keys a manifest, and where it lives ---------------------------------------------------


def test_the_configuration_directory_keys_packs_with_settings(site: Site, tmp_path: Path) -> None:
    """The same settings in another directory (relative paths differ) have their own entry."""
    site.install("tpm_confdir", pack_source())
    variants: set[str] = set()
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "toolpacks.toml").write_text('[packs.hello]\nroot = "data"\n')
        site.host(folder / "toolpacks.toml").toolset()
        variants |= set(body_of(only_manifest())["packs"])
    assert len(variants) == 2


@pytest.mark.parametrize("field", ["pack", "module", "base", "settings", "config_dir"])
def test_every_component_of_a_variant_key_changes_it(field: str, tmp_path: Path) -> None:
    """Pack name, module, base pack, settings and configuration directory each key a variant."""
    from toolpacks.packs._record import PackInfo, PackSource

    def source(**change: Any) -> PackSource:
        values: dict[str, Any] = {
            "pack": "hello",
            "module": "tpm_key",
            "base": None,
            "settings": {"root": "data"},
        }
        values.update(change)
        info = PackInfo(name=values["pack"], source="entry_point", module=values["module"])
        return PackSource(info, settings=values["settings"], base=values["base"])

    one = Manifests(None, {}, tmp_path / "a" / "toolpacks.toml")
    other = Manifests(None, {}, tmp_path / "b" / "toolpacks.toml")
    changed = {
        "pack": (one, source(pack="other")),
        "module": (one, source(module="tpm_other")),
        "base": (one, source(base="hello")),
        "settings": (one, source(settings={"root": "elsewhere"})),
        "config_dir": (other, source()),
    }
    manifests, variant = changed[field]
    assert one._variant(source()) == one._variant(source())
    assert manifests._variant(variant) != one._variant(source())


def test_environment_values_change_a_variant_only_when_not_secret() -> None:
    """A short ordinary value keys the variant; a secret one never reaches the key."""
    from toolpacks.packs._record import PackInfo, PackSource

    info = PackInfo(name="hello", source="entry_point", module="tpm_key")
    short = PackSource(info, settings={"region": {"env": "R"}})
    secret = PackSource(info, settings={"token": {"env": "T"}})
    assert Manifests(None, {"R": "eu"})._variant(short) != Manifests(None, {"R": "us"})._variant(
        short
    )
    assert Manifests(None, {"T": TOKEN_A})._variant(secret) == Manifests(
        None, {"T": TOKEN_B}
    )._variant(secret)


def test_literal_secret_settings_do_not_key_the_variant_even_hashed() -> None:
    """``api_key = "..."`` written in the configuration is left out of the key's hash."""
    from toolpacks.packs._record import PackInfo, PackSource

    info = PackInfo(name="hello", source="entry_point", module="tpm_key")
    keys = {
        Manifests(None, {})._variant(PackSource(info, settings={"api_key": value, "n": 1}))
        for value in (TOKEN_A, TOKEN_B)
    }
    assert len(keys) == 1


def _found(site: Site, module: str) -> Any:
    site.install(module, pack_source())
    found = installed(f"tpm-{module.replace('_', '-')}", "1.0", module, [str(site.root)])
    assert found is not None
    return found


def test_the_manifest_file_name_holds_distribution_version_python_and_record(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each of distribution, version, Python version and RECORD gives another file."""
    found = _found(site, "tpm_name")
    manifests = Manifests(None, os.environ)
    base = manifests.file(found)
    assert base.parent == manifest_dir()
    others = [
        manifests.file(_manifest.Installed("tpm-other", found.version, found.record)),
        manifests.file(_manifest.Installed(found.distribution, "9.9", found.record)),
        manifests.file(_manifest.Installed(found.distribution, found.version, "f" * 64)),
    ]
    monkeypatch.setattr(_manifest, "_PYTHON", "2.7")
    others.append(manifests.file(found))
    assert len({base, *others}) == 5


def test_two_pythons_keep_their_manifests_apart(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another Python version neither reads nor overwrites this one's manifest."""
    site.install("tpm_pythons", pack_source())
    site.host().toolset()
    first = only_manifest()
    monkeypatch.setattr(_manifest, "_PYTHON", "2.7")
    site.host().toolset()
    assert "tpm_pythons" in sys.modules  # not listed from the other Python's manifest
    assert len(manifest_files()) == 2
    assert body_of(first)["python"] != "2.7"


def test_a_manifest_renamed_to_another_pythons_name_is_not_read(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Python version inside the manifest is checked, not only its file name."""
    site.install("tpm_renamed", pack_source())
    site.host().toolset()
    source = only_manifest()
    found = installed("tpm-tpm-renamed", "1.0", "tpm_renamed", [str(site.root)])
    assert found is not None
    monkeypatch.setattr(_manifest, "_PYTHON", "2.7")
    target = Manifests(None, os.environ).file(found)
    source.rename(target)
    site.host().toolset()
    assert "tpm_renamed" in sys.modules


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"TOOLPACKS_CACHE_DIR": "/c/tp"}, "/c/tp/manifests"),
        ({"XDG_CACHE_HOME": "/c/xdg"}, "/c/xdg/toolpacks/manifests"),
        ({"TOOLPACKS_CACHE_DIR": "/c/tp", "XDG_CACHE_HOME": "/c/xdg"}, "/c/tp/manifests"),
        ({"HOME": "/c/home"}, "/c/home/.cache/toolpacks/manifests"),
    ],
)
@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG locations are Linux's")
def test_manifest_directory_locations(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], expected: str
) -> None:
    """``TOOLPACKS_CACHE_DIR`` wins over ``XDG_CACHE_HOME``, which wins over ``~/.cache``."""
    monkeypatch.setenv("HOME", variables.get("HOME", "/c/home"))
    assert manifest_dir(variables) == Path(expected)
    assert Manifests(None, variables).directory == Path(expected)


def test_the_quoted_base64_helpers_agree_with_the_pack() -> None:
    """The forms the pack above shows are those ``scrub`` finds (a check of the test itself)."""
    for shown in (base64.b64encode(TOKEN_A.encode()).decode(), quote(TOKEN_A, safe="")):
        assert scrub(f"x {shown} y", [TOKEN_A]) != f"x {shown} y"
