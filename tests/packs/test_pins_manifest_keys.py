"""Which manifest a host may list from (issue 36, turn-3 survivors).

A manifest a distribution ships describes its pack under its own name with no settings. A
pack the configuration gives settings (which may register other tools, or describe them
otherwise) must not be listed from it: the host imports the pack instead. And after a pack is
rewritten in place, the manifest written for the old files is not used again.
"""

from __future__ import annotations

import sys

import pytest

from toolpacks.packs.entrypoints._manifest import SHIPPED_NAME

from .test_manifests import Site, _shipped_for, pack_source, site  # noqa: F401 (fixture)


@pytest.fixture
def shipped_site(site: Site, monkeypatch: pytest.MonkeyPatch) -> Site:  # noqa: F811
    """``tpm_cfg`` installed with a shipped manifest; no first-load manifest written."""
    monkeypatch.setenv("TOOLPACKS_NO_CACHE", "1")
    shipped = _shipped_for(site, "tpm_cfg", "Greet someone.")
    monkeypatch.delenv("TOOLPACKS_NO_CACHE")
    site.install("tpm_cfg", pack_source(), extra_files={SHIPPED_NAME: shipped})
    return site


def test_the_shipped_manifest_lists_the_pack_without_settings(shipped_site: Site) -> None:
    """The counterpart: with no settings the shipped manifest is used (no import)."""
    assert shipped_site.host().toolset().names() == ["count", "greet"]
    assert "tpm_cfg" not in sys.modules


def test_a_configured_pack_is_imported_not_listed_from_the_shipped_manifest(
    shipped_site: Site,
) -> None:
    host = shipped_site.host({"packs": {"hello": {"greeting": "Howdy"}}})
    assert host.toolset().names() == ["count", "greet"]
    assert "tpm_cfg" in sys.modules, "a configured pack was listed from its shipped manifest"


def test_an_alias_is_imported_not_listed_from_the_shipped_manifest(shipped_site: Site) -> None:
    host = shipped_site.host({"packs": {"other": {"pack": "hello"}}})
    toolset = host.toolset(packs=["other"])
    assert toolset.names() == ["count", "greet"]
    assert "tpm_cfg" in sys.modules, "an alias was listed from the pack's shipped manifest"


def test_a_pack_rewritten_in_place_is_described_anew(site: Site) -> None:  # noqa: F811
    """The listed cache after a rewrite: the new description, never the old manifest's."""
    site.install("tpm_rw", pack_source("Greet someone."))
    site.host().toolset()  # imports it and writes its manifest
    site.install("tpm_rw", pack_source("Welcome a guest warmly."))
    described = site.host().toolset().get("greet").description
    assert described.startswith("Welcome a guest warmly.")
