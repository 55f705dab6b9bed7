"""Small edits of a ``toolpacks.toml`` that keep everything else of it, byte for byte.

There is no TOML writer among toolpacks' dependencies, and rewriting a file a person keeps
would lose its comments and order. So ``toolpacks install`` edits text: it appends a table,
or inserts one name into an agent's ``packs`` list, then parses the result and checks that
exactly the intended change was made before the file is replaced. An edit it cannot make
safely (an inline table, a list it cannot find) is refused with what to write by hand.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from toolpacks.cli._errors import CliError

__all__ = ["add_isolated", "add_to_agent", "remove_isolated"]


def _read(path: Path) -> tuple[str, dict[str, Any]]:
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CliError(f"{path}: invalid TOML, not edited: {exc}") from exc


def _key(name: str) -> str:
    """``name`` as a TOML key (bare when it may be, else quoted)."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def _write_checked(path: Path, text: str, check: Any, what: str) -> None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CliError(f"{path}: {what} would not be valid TOML; not edited ({exc})") from exc
    if not check(data):
        raise CliError(f"{path}: could not {what} safely; please edit the file by hand")
    tmp = path.with_name(path.name + ".toolpacks-tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _append(text: str, block: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    return f"{text}\n{block}" if text else block


def add_isolated(path: Path, name: str, requirement: str) -> None:
    """Add ``[isolated.NAME] requirement = ...`` (unless the same one is there already).

    Raises:
        CliError: ``[isolated.NAME]`` exists with another requirement.
    """
    text, data = _read(path)
    current = data.get("isolated", {}).get(name)
    if isinstance(current, dict):
        if current.get("requirement") == requirement:
            return
        raise CliError(
            f"{path}: [isolated.{name}] already names {current.get('requirement')!r}; "
            f"change its requirement to {requirement!r} by hand"
        )
    block = f"[isolated.{_key(name)}]\nrequirement = {json.dumps(requirement)}\n"

    def check(new: dict[str, Any]) -> bool:
        return bool(new.get("isolated", {}).get(name, {}).get("requirement") == requirement)

    _write_checked(path, _append(text, block), check, f"add [isolated.{name}]")


def add_to_agent(path: Path, agent: str, pack: str) -> None:
    """Make ``pack`` one of ``agent``'s packs (a new agent gets ``packs = [pack]``).

    An agent without ``packs`` (every pack) or with ``"*"`` already has it.
    """
    text, data = _read(path)
    table = data.get("agents", {}).get(agent)
    if table is None:
        block = f"[agents.{_key(agent)}]\npacks = [{json.dumps(pack)}]\n"
        new_text = _append(text, block)
    else:
        packs = table.get("packs", ["*"])
        if "*" in packs or pack in packs:
            return
        new_text = _insert_pack(text, agent, pack)

    def check(new: dict[str, Any]) -> bool:
        before = dict(data)
        after = dict(new)
        agents_before = dict(before.pop("agents", {}))
        agents_after = dict(after.pop("agents", {}))
        mine = dict(agents_after.pop(agent, {}))
        old = dict(agents_before.pop(agent, {}))
        packs_after = mine.pop("packs", [])
        packs_before = old.pop("packs", [])
        return (
            before == after
            and agents_before == agents_after
            and mine == old
            and list(packs_after) == [pack, *packs_before]
        )

    _write_checked(path, new_text, check, f"add {pack!r} to agent {agent!r}")


def _insert_pack(text: str, agent: str, pack: str) -> str:
    """``text`` with ``pack`` first in ``[agents.AGENT]``'s ``packs = [...]``."""
    lines = text.splitlines(keepends=True)
    header = re.compile(
        rf"^\s*\[\s*agents\s*\.\s*(?:{re.escape(agent)}|\"{re.escape(agent)}\")\s*\]"
    )
    inside = False
    for index, line in enumerate(lines):
        if re.match(r"^\s*\[", line):
            inside = bool(header.match(line))
            continue
        match = re.match(r"^(\s*packs\s*=\s*\[)", line) if inside else None
        if match:
            lines[index] = f"{match.group(1)}{json.dumps(pack)}, {line[match.end() :].lstrip()}"
            if lines[index].rstrip().endswith(", ]"):
                lines[index] = lines[index].replace(", ]", "]")
            return "".join(lines)
    raise CliError(
        f"agent {agent!r} lists its packs in a form toolpacks does not edit; add {pack!r} to "
        "its `packs` by hand"
    )


def remove_isolated(path: Path, name: str) -> bool:
    """Remove the ``[isolated.NAME]`` table; whether there was one."""
    text, data = _read(path)
    if name not in data.get("isolated", {}):
        return False
    lines = text.splitlines(keepends=True)
    header = re.compile(
        rf"^\s*\[\s*isolated\s*\.\s*(?:{re.escape(name)}|\"{re.escape(name)}\")\s*\]"
    )
    kept: list[str] = []
    skipping = False
    for line in lines:
        if re.match(r"^\s*\[", line):
            skipping = bool(header.match(line))
        if not skipping:
            kept.append(line)

    def check(new: dict[str, Any]) -> bool:
        before = dict(data)
        isolated = dict(before.pop("isolated", {}))
        isolated.pop(name, None)
        after = dict(new)
        return bool(after.pop("isolated", {}) == isolated and after == before)

    _write_checked(path, "".join(kept), check, f"remove [isolated.{name}]")
    return True
