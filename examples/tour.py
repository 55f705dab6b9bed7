"""A tour of toolpacks on the example packs: discovery, two agents' toolsets, tool calls.

Run from the repository root after installing the project and plugins/ (see README.md).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from toolpacks import Host, PackInfo

HERE = Path(__file__).parent


def ensure_demo_db(path: Path) -> None:
    """Create the small SQLite database the analyst agent queries."""
    if path.exists():
        return
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE cities (name TEXT PRIMARY KEY, country TEXT, population INTEGER)")
        db.executemany(
            "INSERT INTO cities VALUES (?, ?, ?)",
            [("Tokyo", "JP", 37_400_000), ("Delhi", "IN", 31_000_000), ("Lagos", "NG", 15_400_000)],
        )


SOURCES = {
    "files": "file-based tools ([files] dirs)",
    "mcp": "an MCP server ([mcp_servers])",
    "alias": "an alias ([packs.NAME] pack = ...)",
    "in_process": "added in code (Host.add_pack)",
    "llm": "an llm plugin ([llm] plugins)",
}


def origin(pack: PackInfo) -> str:
    """Where a pack comes from: its distribution, or the kind of source for the others."""
    if pack.distribution:
        return f"{pack.distribution} {pack.version}"
    return SOURCES.get(pack.source, pack.source)


async def main() -> None:
    """Discover packs, build two toolsets and call tools through them."""
    ensure_demo_db(HERE / "demo.db")
    host = Host(HERE / "toolpacks.toml")
    print("== discovered packs (nothing imported yet)")
    for pack in host.packs:
        print(f"  {pack.name:<8} {pack.status:<10} {origin(pack)}")

    for agent in ("researcher", "analyst"):
        toolset = host.toolset(agent)
        print(f"\n== toolset for {agent}: {', '.join(toolset.names())}")

    researcher = host.toolset("researcher")
    analyst = host.toolset("analyst")
    print("\n== OpenAI definition of one tool")
    definitions = {d["function"]["name"]: d for d in researcher.definitions("openai")}
    print(json.dumps(definitions["now"], indent=2))

    calls = [
        (
            researcher,
            "convert_time",
            {"time": "2025-03-01T09:30", "from_tz": "Europe/Paris", "to_tz": "Asia/Tokyo"},
        ),
        (researcher, "list_dir", {"path": "examples"}),
        (researcher, "shout", {"message": "file-based tools work"}),
        (researcher, "read_file", {"path": "../etc/passwd"}),
        (analyst, "sql", {"sql": "SELECT name, population FROM cities ORDER BY population DESC"}),
        (analyst, "sql", {"sql": "DELETE FROM cities"}),
        (analyst, "days_between", '{"a": "2025-01-01", "b": "not a date"}'),
        (analyst, "list_dir", {}),
    ]
    for toolset, name, arguments in calls:
        result = await toolset.call(name, arguments)
        status = "error" if result.is_error else "ok"
        print(f"\n== {toolset.agent}: {name}({arguments}) -> {status}")
        print("  " + result.content.replace("\n", "\n  "))
    host.close()


if __name__ == "__main__":
    asyncio.run(main())
