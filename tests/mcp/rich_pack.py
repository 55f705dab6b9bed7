"""A pack whose tools return images and reach their caller (progress, logs, asking).

Shared by the rich MCP tests (stdio, HTTP, in-process): written out as a module the served
process imports.
"""

SOURCE = '''
"""Tools that return images and reach their caller."""

import asyncio
import base64
import os

from pydantic import BaseModel

from toolpacks import Image, ResourceLink, ToolContext, hookimpl, tool

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class Person(BaseModel):
    name: str
    age: int


@tool
def picture() -> list[str | Image | ResourceLink]:
    """A caption, a one-pixel PNG and a link."""
    return ["a picture:", Image(PNG, mime_type="image/png"), ResourceLink("file:///x.png", "x")]


@tool
def bad_picture() -> Image:
    """An image whose MIME type is not an image's."""
    return Image(PNG, mime_type="text/plain")


@tool
def huge_picture() -> Image:
    """An image far over the size limit."""
    return Image(b"0" * (9 * 1024 * 1024), mime_type="image/png")


@tool
async def steps(n: int, ctx: ToolContext) -> str:
    """Reports progress n times (async)."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"step {i + 1}")
    return "done"


@tool
def sync_steps(n: int, ctx: ToolContext) -> str:
    """Reports progress n times (sync, from a worker thread)."""
    for i in range(n):
        ctx.report_progress(i + 1, n)
    return "done"


@tool
async def counting(n: int):
    """Yields 1..n (an async generator: each yield is progress over MCP)."""
    for i in range(n):
        yield i + 1


@tool
async def chatty(ctx: ToolContext) -> str:
    """Logs at four levels."""
    for level in ("debug", "info", "warning", "error"):
        await ctx.log(level, f"{level} message")
    return "logged"


@tool
async def ask_person(ctx: ToolContext) -> str:
    """Asks the user who they are."""
    answer = await ctx.elicit("Who are you?", Person)
    if answer.accepted:
        return f"hello {answer.content.name}, {answer.content.age}"
    return f"the user chose {answer.action}"


@tool
async def ask_model(question: str, ctx: ToolContext) -> str:
    """Asks the client's model."""
    sample = await ctx.sample(question, max_tokens=50, system_prompt="be brief")
    return f"model said: {sample.text}"


@tool
async def wait_forever(marker: str) -> str:
    """Sleeps until cancelled; writes ``marker`` when it is."""
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        with open(marker, "w") as f:
            f.write("cancelled")
        raise
    return "woke"


@hookimpl
def register_tools(register):
    for t in (
        picture, bad_picture, huge_picture, steps, sync_steps, counting, chatty,
        ask_person, ask_model, wait_forever,
    ):
        register(t)
'''

CONFIG = """
[agents.rich]
packs = ["rich"]
"""


def write_rich(directory):
    """Write the pack (discoverable from ``directory``) and its config; the config's path."""
    (directory / "rich_pack_mod.py").write_text(SOURCE)
    dist = directory / "toolpacks_rich-0.1.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-rich\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\nrich = rich_pack_mod\n")
    config = directory / "toolpacks.toml"
    config.write_text(CONFIG)
    return config
