"""The pack's prompts: plain, with arguments (and completion), with a resource, an image."""

from __future__ import annotations

from toolpacks import EmbeddedResource, Image, PromptMessage, prompt

from toolpacks_everything._media import PNG

__all__ = [
    "PROMPTS",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_simple_prompt",
]

_SUGGESTIONS = ("paris", "park", "party", "test", "testValue1", "testValue2")


def _suggest(argument: str, value: str) -> list[str]:
    return [s for s in _SUGGESTIONS if s.startswith(value)]


@prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@prompt(complete=_suggest)
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments.

    Args:
        arg1: First test argument.
        arg2: Second test argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[PromptMessage]:
    """A prompt carrying an embedded resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    return [
        PromptMessage(
            "user",
            EmbeddedResource(
                resourceUri, text="Embedded resource content for testing.", mime_type="text/plain"
            ),
        ),
        PromptMessage("user", "Please process the embedded resource above."),
    ]


@prompt
def test_prompt_with_image() -> list[PromptMessage]:
    """A prompt carrying an image."""
    return [
        PromptMessage("user", Image(PNG, mime_type="image/png")),
        PromptMessage("user", "Please analyze the image above."),
    ]


PROMPTS = (
    test_simple_prompt,
    test_prompt_with_arguments,
    test_prompt_with_embedded_resource,
    test_prompt_with_image,
)
"""The pack's prompts, in registration order."""
