"""``Host(path=...)`` takes the directories packs are discovered in, never a configuration file.

``Host(path="toolpacks.toml")`` reads as "the configuration at this path", but ``path`` is the
list of ``sys.path``-like entries to search for installed packs; the file would be silently
ignored. One string (or ``PathLike``) is refused, with what to write instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolpacks import Host


@pytest.mark.parametrize("given", ["toolpacks.toml", Path("toolpacks.toml"), "site-packages"])
def test_one_path_is_refused_saying_what_to_use(given: object) -> None:
    """A str or PathLike is a TypeError naming ``config=`` for a file and a list for entries."""
    Path("toolpacks.toml").write_text('[agents.a]\npacks = ["*"]\n', encoding="utf-8")
    with pytest.raises(TypeError) as info:
        Host(path=given, discover=False)  # type: ignore[arg-type]
    message = str(info.value)
    assert "config=" in message
    assert "list" in message
    assert repr(str(given)) in message


def test_a_list_of_directories_is_taken(tmp_path: Path) -> None:
    """A list (or tuple) of directories is what ``path`` means; Paths in it are accepted."""
    host = Host({}, path=[str(tmp_path), tmp_path / "other"])  # type: ignore[list-item]
    assert host.packs == []
    assert Host({}, path=(str(tmp_path),)).packs == []
