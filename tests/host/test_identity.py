"""Scopes in-process: a tool's own, an agent's, ``tool_scopes``; principals' views; audit.

Every check lives in ``toolpacks.host.identity`` (the table) and in the call engine (a tool's
own scopes, so ``Tool.invoke`` refuses too); these tests go through each in-process road.
"""

from __future__ import annotations

import asyncio
import json
import logging
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from toolpacks import Host, Principal, ToolContext, Toolset, tool
from toolpacks.exceptions import ConfigError, ToolDefinitionError

FORMATS = ("neutral", "openai", "openai-responses", "anthropic", "gemini", "bedrock", "mcp")


@tool(scopes=["repo.read"], read_only=True)
def read_repo(path: str, context: ToolContext) -> dict[str, Any]:
    """Read a file of the repository."""
    p = context.principal
    return {"subject": p.subject if p else None, "scopes": sorted(p.scopes) if p else None}


@tool(scopes="repo.write repo.admin")
def push(branch: str) -> str:
    """Push a branch."""
    return branch


@tool
def ping(word: str) -> str:
    """Answer a ping."""
    return word


ALICE = Principal("alice", scopes={"repo.read"})
ADMIN = Principal("root", scopes={"repo.read", "repo.write", "repo.admin", "ops"})


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def _names(definitions: list[dict[str, Any]]) -> set[str]:
    found = set()
    for d in definitions:
        text = json.dumps(d)
        found |= {n for n in ("read_repo", "push", "ping") if f'"{n}"' in text}
    return found


# -- a tool's own scopes ----------------------------------------------------------------------


def test_scopes_are_a_frozenset_and_a_string_splits_as_oauth_writes_it() -> None:
    assert read_repo.scopes == frozenset({"repo.read"})
    assert push.scopes == frozenset({"repo.write", "repo.admin"})
    assert ping.scopes == frozenset()


@pytest.mark.parametrize("bad", [[""], [3], ["two words"], [None], " ", ""])
def test_bad_scopes_are_a_definition_error(bad: list[Any]) -> None:
    with pytest.raises(ToolDefinitionError, match=r"scopes=\[\.\.\.\]"):

        @tool(scopes=bad)
        def f() -> None:
            """F."""


def test_invoke_refuses_without_principal_and_without_the_scope() -> None:
    none = run(read_repo.invoke({"path": "a"}))
    assert none.error is not None
    assert none.error.kind == "denied"
    assert "no principal" in none.error.message
    assert "repo.read" in none.error.message
    other = Principal("bob", scopes={"x"})
    lacking = run(read_repo.invoke({"path": "a"}, ToolContext(principal=other)))
    assert lacking.error is not None
    assert "missing scope repo.read" in lacking.error.message
    ok = run(read_repo.invoke({"path": "a"}, ToolContext(principal=ALICE)))
    assert ok.error is None
    assert ok.value == {"subject": "alice", "scopes": ["repo.read"]}  # the tool sees its caller


def test_every_missing_scope_is_named() -> None:
    result = run(Toolset([push]).call("push", {"branch": "b"}, ToolContext(principal=ALICE)))
    assert result.error is not None
    assert "repo.admin" in result.error.message
    assert "repo.write" in result.error.message


def test_refused_before_the_arguments_are_read() -> None:
    # bad arguments from a caller without the scope: the answer is the refusal, not a schema
    result = run(Toolset([read_repo]).call("read_repo", {"nope": 1}))
    assert result.error is not None
    assert result.error.kind == "denied"


def test_toolset_call_call_sync_call_many_execute_refuse_and_allow() -> None:
    ts = Toolset([read_repo, ping], agent="a")
    ctx = ToolContext(principal=ALICE)
    assert run(ts.call("read_repo", {"path": "x"})).error is not None
    assert run(ts.call("read_repo", {"path": "x"}, ctx)).error is None
    assert ts.call_sync("read_repo", {"path": "x"}).error is not None
    assert ts.call_sync("read_repo", {"path": "x"}, ctx).error is None
    many = run(ts.call_many([("read_repo", {"path": "x"}), ("ping", {"word": "w"})]))
    assert [r.error is None for r in many] == [False, True]
    payload = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_repo", "arguments": '{"path": "x"}'},
            }
        ],
    }
    refused = run(ts.execute(payload, "openai"))
    assert "no principal" in json.dumps(refused)
    allowed = run(ts.for_principal(ALICE).execute(payload, "openai"))
    assert "alice" in json.dumps(allowed)


# -- for_principal --------------------------------------------------------------------------


def test_view_lists_only_what_the_principal_may_call_in_every_format() -> None:
    ts = Toolset([read_repo, push, ping], agent="a")
    assert ts.names() == ["ping", "push", "read_repo"]  # the toolset itself lists everything
    assert ts.for_principal(None).names() == ["ping"]
    view = ts.for_principal(ALICE)
    assert view.names() == ["ping", "read_repo"]
    assert len(view) == 2
    assert "push" not in view
    for fmt in FORMATS:
        assert _names(view.definitions(fmt)) == {"ping", "read_repo"}, fmt
        assert _names(ts.for_principal(None).definitions(fmt)) == {"ping"}, fmt
        assert _names(ts.for_principal(ADMIN).definitions(fmt)) == {"ping", "push", "read_repo"}


def test_view_search_never_reveals_a_tool_the_principal_cannot_call() -> None:
    ts = Toolset([read_repo, push, ping], agent="a")
    assert "push" in [h.exposed for h in ts.search("push branch")]
    assert "push" not in [h.exposed for h in ts.for_principal(ALICE).search("push branch")]
    assert [h.exposed for h in ts.for_principal(None).search("push branch repository")] in (
        [],
        ["ping"],
    )
    assert "push" in [h.exposed for h in ts.for_principal(ADMIN).search("push branch")]
    regex = ts.for_principal(ALICE).search("push|read", mode="regex")
    assert [h.exposed for h in regex] == ["read_repo"]


def test_view_calls_carry_its_principal() -> None:
    view = Toolset([read_repo], agent="a").for_principal(ALICE)
    result = run(view.call("read_repo", {"path": "x"}))
    assert result.value == {"subject": "alice", "scopes": ["repo.read"]}
    assert view.call_sync("read_repo", {"path": "x"}).value["subject"] == "alice"
    (many,) = run(view.call_many([("read_repo", {"path": "x"})]))
    assert many.value["subject"] == "alice"


def test_view_refuses_a_context_naming_another_principal() -> None:
    view = Toolset([read_repo], agent="a").for_principal(ALICE)
    same = run(view.call("read_repo", {"path": "x"}, ToolContext(principal=ALICE)))
    assert same.error is None
    other = run(view.call("read_repo", {"path": "x"}, ToolContext(principal=ADMIN)))
    assert other.error is not None
    assert other.error.kind == "denied"
    assert "another principal" in other.error.message


def test_views_share_the_parent_and_are_cached_per_scope_set() -> None:
    ts = Toolset([read_repo, push, ping], agent="a")
    one = ts.for_principal(ALICE)
    two = ts.for_principal(Principal("carol", scopes={"repo.read"}))
    assert one._entries is two._entries  # filtered once for the scope set {repo.read}
    assert one.get("read_repo") is ts.get("read_repo")
    assert one.for_principal(ADMIN).names() == ts.for_principal(ADMIN).names()


# -- an agent's scopes and tool_scopes --------------------------------------------------------


@pytest.fixture
def host(pack_of: Callable[..., types.ModuleType]) -> Iterator[Host]:
    h = Host(
        {
            "agents": {
                "ops": {"scopes": ["ops"]},
                "dev": {"tool_scopes": {"repo.ping": ["ops"], "push": ["deploy"]}},
            }
        },
        discover=False,
    )
    h.add_pack(pack_of(read_repo, push, ping), "repo")
    yield h
    h.close()


def test_agent_scopes_refuse_every_call_and_empty_every_listing(host: Host) -> None:
    ts = host.toolset("ops")
    assert ts.for_principal(ALICE).names() == []
    assert ts.for_principal(None).names() == []
    assert ts.for_principal(ALICE).definitions("openai") == []
    refused = run(ts.call("ping", {"word": "w"}, ToolContext(principal=ALICE)))
    assert refused.error is not None
    assert "This agent" in refused.error.message
    assert "missing scope ops" in refused.error.message
    ops = Principal("op", scopes={"ops"})
    assert ts.for_principal(ops).names() == ["ping"]
    assert run(ts.for_principal(ops).call("ping", {"word": "w"})).value == "w"


def test_tool_scopes_add_to_a_tools_own_and_hide_it(host: Host) -> None:
    ts = host.toolset("dev")
    table = ts.scope_table
    assert table.needs("ping") == {"ops"}
    assert table.needs("push") == {"repo.write", "repo.admin", "deploy"}
    assert ts.for_principal(ALICE).names() == ["read_repo"]
    refused = run(ts.call("ping", {"word": "w"}, ToolContext(principal=ALICE)))
    assert refused.error is not None
    assert "missing scope ops" in refused.error.message
    no_deploy = run(ts.for_principal(ADMIN).call("push", {"branch": "b"}))
    assert no_deploy.error is not None
    assert "missing scope deploy" in no_deploy.error.message


def test_a_tool_scopes_glob_matching_nothing_is_a_config_error(
    pack_of: Callable[..., types.ModuleType],
) -> None:
    h = Host({"agents": {"dev": {"tool_scopes": {"repo.pnig": ["ops"]}}}}, discover=False)
    h.add_pack(pack_of(ping), "repo")
    with pytest.raises(ConfigError, match=r"tool_scopes .*repo\.pnig.*did you mean 'repo\.ping'"):
        h.toolset("dev")
    h.close()


@pytest.mark.parametrize("scopes", [[], [""], ["a b"]])
def test_a_tool_scopes_glob_with_bad_scopes_is_a_config_error(
    pack_of: Callable[..., types.ModuleType], scopes: list[str]
) -> None:
    h = Host({"agents": {"dev": {"tool_scopes": {"ping": scopes}}}}, discover=False)
    h.add_pack(pack_of(ping), "repo")
    with pytest.raises(ConfigError, match="tool_scopes 'ping'"):
        h.toolset("dev")
    h.close()


# -- audit ------------------------------------------------------------------------------------


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def audit() -> Iterator[_Records]:
    log = logging.getLogger("toolpacks.audit")
    handler, level = _Records(), log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    yield handler
    log.removeHandler(handler)
    log.setLevel(level)


def test_one_audit_record_per_call_without_argument_values(audit: _Records) -> None:
    ts = Toolset([read_repo, ping], agent="a")
    view = ts.for_principal(ALICE)
    run(view.call("read_repo", {"path": "SECRET-PATH"}))
    run(ts.call("read_repo", {"path": "SECRET-PATH"}))
    run(view.call("nope", {"path": "SECRET-PATH"}))
    run(view.call("ping", {"word": 5}))
    run(view.call_many([("ping", {"word": "SECRET-WORD"}), ("ping", {"word": "w"})]))
    got = [r.audit for r in audit.records]  # type: ignore[attr-defined]
    assert [(a["subject"], a["tool"], a["decision"], a["reason"]) for a in got] == [
        ("alice", "read_repo", "allowed", None),
        (None, "read_repo", "refused", "missing_scope"),
        ("alice", "nope", "refused", "unknown_tool"),
        ("alice", "ping", "refused", "invalid_arguments"),
        ("alice", "ping", "allowed", None),
        ("alice", "ping", "allowed", None),
    ]
    for record in audit.records:
        assert json.loads(record.getMessage()) == record.audit  # type: ignore[attr-defined]
        assert "SECRET" not in record.getMessage()
        assert set(record.audit) >= {  # type: ignore[attr-defined]
            "time",
            "agent",
            "subject",
            "tool",
            "decision",
            "reason",
            "outcome",
            "duration_ms",
        }
    assert got[0]["agent"] == "a"
    assert got[0]["outcome"] == "ok"


def test_agent_scope_refusal_is_audited_with_its_reason(host: Host, audit: _Records) -> None:
    run(host.toolset("ops").call("ping", {"word": "w"}, ToolContext(principal=ALICE)))
    (record,) = audit.records
    assert record.audit["reason"] == "agent_scope"  # type: ignore[attr-defined]


def test_audit_refusal_for_the_http_half(audit: _Records) -> None:
    from toolpacks.host.identity._audit import audit_refusal

    audit_refusal("dev", None, "unauthenticated", road="http")
    (record,) = audit.records
    assert record.audit["decision"] == "refused"  # type: ignore[attr-defined]
    assert record.audit["reason"] == "unauthenticated"  # type: ignore[attr-defined]


def test_a_tool_listed_from_its_manifest_keeps_its_scopes() -> None:
    """Listing from a manifest imports no pack, and the view still hides the scoped tool."""
    from toolpacks.packs.entrypoints._manifest_tool import ManifestTool, tool_record

    record = json.loads(json.dumps(tool_record("repo.read_repo", read_repo)))
    listed = ManifestTool.from_record(record, "repo", lambda _: read_repo)
    assert listed.scopes == {"repo.read"}
    ts = Toolset([listed, ping], agent="a")
    assert ts.for_principal(None).names() == ["ping"]
    assert ts.for_principal(ALICE).names() == ["ping", "read_repo"]
