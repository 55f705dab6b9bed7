"""toolpacks-everything: every MCP feature a pack can offer, under the conformance suite's names.

Tools (``tools``): text, image, audio, embedded-resource and mixed results; log messages and
progress; an error result; sampling and elicitation; a tool given by its JSON Schema; and
``update_watched_resource``. Prompts (``prompts``): ``test_simple_prompt``,
``test_prompt_with_arguments`` (with completion), ``test_prompt_with_embedded_resource``,
``test_prompt_with_image``. Resources (``resources``): ``test://static-text``,
``test://static-binary``, the template ``test://template/{id}/data`` and the subscribable
``test://watched-resource``. The pack takes no settings.
"""

from __future__ import annotations

from toolpacks import hookimpl
from toolpacks.hookspecs import Register

from toolpacks_everything.prompts import PROMPTS
from toolpacks_everything.resources import RESOURCES
from toolpacks_everything.tools import TOOLS

__all__ = ["PROMPTS", "RESOURCES", "TOOLS", "register_prompts", "register_resources",
           "register_tools"]


@hookimpl
def register_tools(register: Register) -> None:
    """Register the pack's tools."""
    for item in TOOLS:
        register(item)


@hookimpl
def register_prompts(register: Register) -> None:
    """Register the pack's prompts."""
    for item in PROMPTS:
        register(item)


@hookimpl
def register_resources(register: Register) -> None:
    """Register the pack's resources."""
    for item in RESOURCES:
        register(item)
