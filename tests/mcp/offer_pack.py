"""A pack offering prompts and resources, and a config serving it (and an agent with none).

Shared by the prompts and resources tests (stdio, HTTP, in-process): written out as a module
the served process imports.
"""

from __future__ import annotations

from pathlib import Path

SOURCE = '''
"""Prompts and resources, some of which fail."""

import threading

from toolpacks import EmbeddedResource, Image, PromptMessage, ToolContext, hookimpl, prompt
from toolpacks import resource, tool

PNG = bytes.fromhex("89504e470d0a1a0a")
CITIES = ("paris", "park", "party", "prague")


def cities(argument, value):
    return [c for c in CITIES if c.startswith(value)]


@prompt(complete=cities)
def trip(city: str, days: str = "3"):
    """Plan a trip.

    Args:
        city: Where to go.
        days: How many days.
    """
    return [
        PromptMessage("user", f"Plan {days} days in {city}."),
        PromptMessage("assistant", EmbeddedResource("memo://" + city, text="notes")),
        PromptMessage("user", Image(PNG, mime_type="image/png")),
    ]


@prompt
def broken_prompt():
    """Always fails."""
    raise RuntimeError("secret-prompt-detail")


@resource("memo://static", mime_type="text/plain")
def static():
    """A static memo."""
    return "static memo"


@resource("memo://blob", mime_type="application/octet-stream")
def blob():
    """Binary data."""
    return b"\\x00\\x01\\x02"


@resource("memo://users/{user}/notes/{day}", complete=cities)
def notes(user, day):
    """One user's notes of one day."""
    return f"notes of {user} on {day}"


@resource("memo://broken")
def broken():
    """Always fails."""
    raise RuntimeError("secret-resource-detail")


class Counter:
    def __init__(self):
        self.lock = threading.Lock()
        self.value = 0
        self.resource = resource("memo://counter", name="counter")(self.read)

    def read(self):
        with self.lock:
            return str(self.value)


counter = Counter()


@tool
def bump() -> int:
    """Increase the counter and notify its subscribers."""
    with counter.lock:
        counter.value += 1
        value = counter.value
    counter.resource.updated()
    return value


@tool
async def ask(ctx: ToolContext) -> str:
    """Ask the user for a name (elicitation)."""
    form = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    answer = await ctx.elicit("Your name?", form)
    return f"{answer.action}: {answer.content}"


@hookimpl
def register_tools(register):
    register(bump)
    register(ask)


@hookimpl
def register_prompts(register):
    register(trip)
    register(broken_prompt)


@hookimpl
def register_resources(register):
    for r in (static, blob, notes, broken, counter.resource):
        register(r)
'''

PLAIN = '''
from toolpacks import hookimpl, tool


@tool
def hello() -> str:
    """Say hello."""
    return "hello"


@hookimpl
def register_tools(register):
    register(hello)
'''

CONFIG = """
[agents.memo]
packs = ["memo"]

[agents.plain]
packs = ["plain"]

[agents.picky]
packs = ["memo"]
prompts = ["memo.trip"]
resources = ["memo.static", "memo.notes"]
"""


def write_offer(directory: Path, settings: str = "") -> Path:
    """Write the packs and their configuration (``settings`` first) into ``directory``."""
    (directory / "offer_memo.py").write_text(SOURCE, encoding="utf-8")
    (directory / "offer_plain.py").write_text(PLAIN, encoding="utf-8")
    dist = directory / "toolpacks_offer-0.1.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-offer\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[toolpacks]\nmemo = offer_memo\nplain = offer_plain\n"
    )
    config = directory / "toolpacks.toml"
    config.write_text(settings + CONFIG, encoding="utf-8")
    return config
