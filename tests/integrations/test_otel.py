"""OpenTelemetry: a span per ``Toolset.call``, with names and outcome, never values."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from toolpacks import Toolset, tool
from toolpacks.host._toolset import ToolEntry
from toolpacks.integrations import otel

SECRET = "s3cr3t-argument-value"


@tool
def read(path: str) -> str:
    """Read a file."""
    return f"contents of {path}: RESULT-VALUE"


@tool
def explode(path: str) -> str:
    """Fail."""
    raise RuntimeError(f"cannot read {path}")


def files_toolset(**kwargs: Any) -> Toolset:
    """``read`` and ``explode`` of a pack ``files``, exposed as ``files_read``, ..."""
    entries = [ToolEntry(f"files_{t.name}", f"files.{t.name}", "files", t) for t in (read, explode)]
    return Toolset(entries, agent="writer", **kwargs)


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    otel.uninstrument()


def everything_shown(span: ReadableSpan) -> str:
    """All a span carries, as text (to check that no value leaks into it)."""
    return json.dumps(
        {
            "name": span.name,
            "attributes": dict(span.attributes or {}),
            "status": str(span.status.description),
            "events": [(e.name, dict(e.attributes or {})) for e in span.events],
        }
    )


def test_a_call_is_a_span_with_its_names_pack_agent_and_outcome(spans: Any) -> None:
    """The span names the tool (exposed and qualified), pack, agent, outcome and duration."""
    provider, exporter = spans
    toolset = files_toolset()
    otel.instrument(toolset, tracer_provider=provider)
    result = asyncio.run(toolset.call("files_read", {"path": SECRET}, call_id="c1"))
    assert not result.is_error
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool files_read"
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "files_read"
    assert attributes["gen_ai.tool.call.id"] == "c1"
    assert attributes["toolpacks.tool.qualified_name"] == "files.read"
    assert attributes["toolpacks.pack"] == "files"
    assert attributes["toolpacks.agent"] == "writer"
    assert attributes["toolpacks.outcome"] == "ok"
    assert isinstance(attributes["toolpacks.duration_ms"], float)
    assert attributes["toolpacks.duration_ms"] >= 0
    assert span.status.status_code is StatusCode.UNSET
    shown = everything_shown(span)
    assert SECRET not in shown
    assert "RESULT-VALUE" not in shown


def test_every_outcome_is_named_by_its_error_kind_and_never_its_message(spans: Any) -> None:
    """Refused, invalid, unknown and failing calls are spans too, marked errors by kind."""
    provider, exporter = spans
    toolset = files_toolset(
        authorizers=[lambda arguments, **_: "deny" if arguments.get("path") == "/etc" else None]
    )
    otel.instrument(toolset, tracer_provider=provider)

    async def calls() -> None:
        await toolset.call("files_read", {"path": 3})
        await toolset.call("files.read", {"path": "/etc"})
        await toolset.call("nope", {"path": SECRET})
        await toolset.call("files_explode", {"path": SECRET})

    asyncio.run(calls())
    finished = exporter.get_finished_spans()
    outcomes = [dict(s.attributes or {})["toolpacks.outcome"] for s in finished]
    assert outcomes == ["invalid_arguments", "denied", "not_found", "tool_error"]
    assert [dict(s.attributes or {})["gen_ai.tool.name"] for s in finished] == [
        "files_read",
        "files_read",  # called by its qualified name: the exposed name is shown
        "nope",
        "files_explode",
    ]
    for span in finished:
        assert span.status.status_code is StatusCode.ERROR
        assert dict(span.attributes or {})["error.type"] == span.status.description
        assert SECRET not in everything_shown(span)
        assert "/etc" not in everything_shown(span)


def test_an_exception_escaping_the_call_ends_its_span_and_propagates(spans: Any) -> None:
    """A hook that raises: the span is an error named by the exception type, not its text."""
    provider, exporter = spans

    def authorize(**_: Any) -> None:
        raise LookupError(f"policy store down for {SECRET}")

    toolset = files_toolset(authorizers=[authorize])
    otel.instrument(toolset, tracer_provider=provider)
    with pytest.raises(LookupError):
        asyncio.run(toolset.call("files_read", {"path": "a"}))
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert dict(span.attributes or {})["error.type"] == "LookupError"
    assert SECRET not in everything_shown(span)


def test_a_call_made_inside_an_application_span_is_its_child(spans: Any) -> None:
    """The span joins the caller's trace, and work the tool traces nests under it."""
    provider, exporter = spans
    toolset = files_toolset()
    otel.instrument(toolset, tracer_provider=provider)
    tracer = provider.get_tracer("app")

    async def run() -> None:
        with tracer.start_as_current_span("agent turn"):
            await toolset.call("files_read", {"path": "a"})

    asyncio.run(run())
    call_span, turn = exporter.get_finished_spans()
    assert turn.name == "agent turn"
    assert call_span.parent is not None
    assert call_span.parent.span_id == turn.context.span_id


def test_instrument_without_a_toolset_traces_every_toolset_until_uninstrumented(
    spans: Any,
) -> None:
    """``instrument()`` covers toolsets built before and after it (served ones included)."""
    provider, exporter = spans
    before = files_toolset()
    otel.instrument(tracer_provider=provider)
    after = files_toolset()
    asyncio.run(before.call("files_read", {"path": "a"}))
    asyncio.run(after.call("files_read", {"path": "a"}))
    assert len(exporter.get_finished_spans()) == 2
    otel.uninstrument()
    asyncio.run(after.call("files_read", {"path": "a"}))
    assert len(exporter.get_finished_spans()) == 2


def test_uninstrumenting_one_toolset_stops_its_spans(spans: Any) -> None:
    provider, exporter = spans
    toolset = files_toolset()
    otel.instrument(toolset, tracer_provider=provider)
    otel.uninstrument(toolset)
    asyncio.run(toolset.call("files_read", {"path": "a"}))
    assert exporter.get_finished_spans() == ()


def test_in_process_adapter_calls_are_traced_once_per_call(spans: Any) -> None:
    """Calls through an adapter are spans; its approval probe (openai-agents) is not."""
    from agents import Agent, RunConfig, Runner
    from agents.testing import ScriptedModel, assistant_message, function_call

    from toolpacks.integrations.openai_agents import as_tools

    provider, exporter = spans
    toolset = files_toolset(authorizers=[lambda **_: "allow"])
    otel.instrument(toolset, tracer_provider=provider)
    model = ScriptedModel(
        [
            [function_call("files_read", {"path": SECRET}, call_id="c9")],
            [assistant_message("done")],
        ]
    )
    agent = Agent(name="files", model=model, tools=as_tools(toolset))
    result = asyncio.run(Runner.run(agent, "read", run_config=RunConfig(tracing_disabled=True)))
    assert result.final_output == "done"
    (span,) = exporter.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert (attributes["gen_ai.tool.call.id"], attributes["toolpacks.outcome"]) == ("c9", "ok")
    assert SECRET not in everything_shown(span)


def test_the_global_tracer_provider_is_used_by_default() -> None:
    """Without ``tracer_provider``, spans go where the application's provider sends them."""
    code = """
import asyncio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from toolpacks import Toolset, tool
from toolpacks.integrations import otel

@tool
def ping() -> str:
    '''Ping.'''
    return "pong"

otel.instrument()
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)  # set after instrument(): still used
asyncio.run(Toolset([ping]).call("ping"))
print([s.name for s in exporter.get_finished_spans()])
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "['execute_tool ping']"


def test_toolpacks_does_not_import_opentelemetry() -> None:
    """Tracing is opt-in: importing toolpacks and calling a tool load no OpenTelemetry."""
    code = (
        "import asyncio, sys\n"
        "from toolpacks import Toolset, tool\n"
        "@tool\n"
        "def ping() -> str:\n"
        "    '''Ping.'''\n"
        "    return 'pong'\n"
        "asyncio.run(Toolset([ping]).call('ping'))\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]"


def test_instrument_refuses_what_is_not_a_toolset() -> None:
    with pytest.raises(TypeError, match="Toolset"):
        otel.instrument("toolset")  # type: ignore[arg-type]
