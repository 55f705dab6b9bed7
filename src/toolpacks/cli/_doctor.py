"""``toolpacks doctor``: everything that is wrong, in one report, with a non-zero exit."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from toolpacks.cli._checks import (
    agent_findings,
    allowed_agent_findings,
    unknown_packs,
    with_hint,
)
from toolpacks.cli._errors import key_hints
from toolpacks.cli._logs import LogRedactor, conflict_notes, redacted_logs
from toolpacks.core._secrets import (
    MIN_ENV_LEN,
    REDACTED,
    is_secret_key,
    is_secret_value,
    redact_text,
    secret_values,
)
from toolpacks.exceptions import ConfigError, PackError, ToolpacksError, UntrustedConfigError

if TYPE_CHECKING:
    from toolpacks.host._host import Host

__all__ = [
    "Finding",
    "LogRedactor",
    "config_secrets",
    "diagnose",
    "edit_distance",
    "redacted_logs",
    "run_doctor",
    "shown",
]


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem or warning."""

    level: Literal["error", "warning", "info"]
    """Errors make ``doctor`` exit non-zero; warnings do not; info is a note (a conflict a
    policy resolved)."""
    topic: str
    """What it concerns: ``config``, ``pack NAME``, ``agent NAME``, ``pin NAME``."""
    message: str
    """What is wrong and how to fix it."""


@dataclass(slots=True)
class Report:
    """The doctor's findings and measurements."""

    findings: list[Finding] = field(default_factory=list)
    """Problems found."""
    import_seconds: dict[str, float] = field(default_factory=dict)
    """Per-pack import and registration time."""
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """Values never to report (see ``config_secrets``)."""

    def add(self, level: Literal["error", "warning", "info"], topic: str, message: str) -> None:
        """Record a finding, with secrets (and token-like strings) redacted."""
        self.findings.append(
            Finding(level, redact_text(topic, self.secrets), redact_text(message, self.secrets))
        )

    @property
    def ok(self) -> bool:
        """Whether nothing is an error."""
        return all(f.level != "error" for f in self.findings)

    @property
    def clean(self) -> bool:
        """Whether nothing is an error or a warning."""
        return all(f.level == "info" for f in self.findings)


def edit_distance(a: str, b: str) -> int:
    """The Levenshtein distance between two strings."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def config_secrets(host: Host, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values ``show`` and ``doctor`` must never print.

    Values of the configuration under secret-looking keys (nested tables included),
    token-like values, URL passwords, every value read from the environment through
    ``{ env = "NAME" }``, the secret-looking variables MCP servers copy from it, and the
    values of secret-looking flags in their arguments (``--token X``).
    """
    from toolpacks.host.config._load import redact_args

    env = os.environ if environ is None else environ
    found = secret_values(host.config.raw, env)
    for server in host.config.config.mcp_servers.values():
        for arg, hidden in zip(server.args, redact_args(server.args), strict=True):
            flag, _, value = arg.partition("=")
            if hidden == REDACTED:
                found.append(arg)
            elif hidden == f"{flag}={REDACTED}":
                found.append(value)
        if isinstance(server.env, list):
            for name in server.env:
                value = env.get(name, "")
                if len(value) >= MIN_ENV_LEN and (is_secret_key(name) or is_secret_value(value)):
                    found.append(value)
    return tuple(dict.fromkeys(found))


def shown(value: Any, secrets: tuple[str, ...]) -> Any:
    """A copy of a JSON-like value for display, every string passed through ``redact_text``."""
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, Mapping):
        return {k: shown(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shown(v, secrets) for v in value]
    return value


def _normalize(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def diagnose(config: str | None, slow: float = 1.0) -> Report:
    """Check the configuration, every pack, every agent and the pins.

    Findings and the warnings logged meanwhile never hold a secret (see ``config_secrets``).
    """
    with redacted_logs() as logs:
        return _diagnose(config, slow, logs)


def _diagnose(config: str | None, slow: float, logs: LogRedactor) -> Report:
    from toolpacks.host._host import Host

    report = Report()
    try:
        host = Host(config)
    except ToolpacksError as exc:
        hints = key_hints(str(exc)) if isinstance(exc, ConfigError) else []
        report.add("error", "config", "\n  ".join([str(exc), *hints]))
        return report
    report.secrets = logs.secrets = config_secrets(host)
    try:
        host.check_trusted()  # untrusted [packs.NAME] settings are then withheld (Host.load)
    except UntrustedConfigError as exc:
        report.add("error", "config", str(exc))
    for problem in host.discovery_problems:
        report.add("warning", "discovery", problem)
    configured: set[str] = set(host.config.config.pack_settings())
    for agent_config in host.config.config.agents.values():
        configured.update(n for n in agent_config.packs if n != "*")
    for info in host.packs:
        if info.status == "available":
            loaded = host.load(info.name)
            info = loaded.info
            for problem in loaded.problems:
                report.add("warning", f"pack {info.name}", problem)
            if info.source == "isolated":
                from toolpacks.packs.isolated._pack import isolation_report

                report.add("info", f"pack {info.name}", isolation_report(loaded) or "isolated")
                _sandbox_report(report, info.name, loaded)
        if info.import_seconds is not None:
            report.import_seconds[info.name] = info.import_seconds
            if info.import_seconds > slow:
                report.add(
                    "warning",
                    f"pack {info.name}",
                    f"import and registration took {info.import_seconds:.2f} s (threshold "
                    f"{slow:g} s); it slows every toolset that uses it",
                )
        if info.status in ("failed", "clash"):
            report.add("error", f"pack {info.name}", f"{info.describe()}: {info.error}")
        elif info.status == "disabled":
            report.add("warning", f"pack {info.name}", f"disabled: {info.error}")
    installed = {p.name: p for p in host.packs}
    for name in sorted(set(host.config.config.pack_settings()) - set(installed)):
        report.add(
            "warning",
            f"pack {name}",
            with_hint(
                f"{host.config.source}: [packs.{name}] configures a pack that is not installed "
                f"(installed: {', '.join(installed) or 'none'})",
                name,
                installed,
            ),
        )
    for wanted in sorted(configured & set(installed)):
        # A configured name no pack has is the user's typo (reported with the agent), not
        # a look-alike distribution's doing.
        candidates = {_normalize(wanted), _normalize(f"toolpacks-{wanted}")}
        for info in installed.values():
            # A look-alike distribution may well declare the very pack name it imitates,
            # so the pack name is no reason to skip it; the distribution name is checked.
            if not info.distribution or info.source != "entry_point":
                continue
            dist = _normalize(info.distribution)
            if dist in candidates:
                continue
            if any(edit_distance(dist, c) == 1 for c in candidates):
                report.add(
                    "warning",
                    f"pack {info.name}",
                    f"distribution {info.distribution!r} is one letter away from the configured "
                    f"pack {wanted!r}; check it is the package you meant to install (typosquat?)",
                )
    _check_agents(host, report)
    try:
        from toolpacks.host._lockfile import check_pins

        for name, message in check_pins(host):
            report.add("error", f"pin {name}", message)
    except ToolpacksError as exc:
        report.add("error", "pins", str(exc))
    from toolpacks.cli._doctor_credentials import credential_findings

    credential_findings(host, report.add)  # names and counts, never values
    host.close()
    return report


def _check_agents(host: Host, report: Report) -> None:
    """Build every agent's toolset (or the default one); check what each names."""
    configured = host.config.config.agents
    agents: list[str | None] = [*configured] or [None]
    for agent in agents:
        topic = f"agent {agent or '(default)'}"
        unknown = unknown_packs(host, configured[agent]) if agent is not None else []
        count: int | None = None
        with conflict_notes() as notes:
            try:
                built = host.toolset(agent)
                count = len(built)
                if built.deferred:  # sent to the model only once a search finds them
                    shown = ", ".join(sorted(built.deferred)[:10])
                    more = "…" if len(built.deferred) > 10 else ""
                    report.add("info", topic, f"{len(built.deferred)} deferred: {shown}{more}")
            except UntrustedConfigError:
                report.add("error", topic, "not built: the configuration needs trust (above)")
                unknown = []
            except ToolpacksError as exc:
                message = str(exc)
                named, failed, _ = message.partition(" failed to load: ")
                if isinstance(exc, PackError) and failed:  # its pack's finding gives the cause
                    message = f"{named} failed to load (see the pack's error above)"
                elif "did you mean" not in message:
                    message = "; ".join([message, *unknown])
                report.add("error", topic, message)
                unknown = []
        for message in unknown:
            report.add("warning", topic, message)
        for note in notes:
            report.add("info", topic, f"conflict resolved: {note}")
        if agent is not None:
            agent_findings(host, agent, configured[agent], count, report.add)
    allowed_agent_findings(host, list(configured), report.add)


def run_doctor(args: argparse.Namespace) -> int:
    """Print the report; exit status 1 when anything is an error."""
    from toolpacks.cli._logs import pack_failures_shown

    pack_failures_shown()  # a finding names each pack that failed, and why
    report = diagnose(args.config, args.slow)
    if getattr(args, "json", False):
        data: dict[str, Any] = {
            "ok": report.ok,
            "findings": [
                {"level": f.level, "topic": f.topic, "message": f.message} for f in report.findings
            ],
            "import_seconds": report.import_seconds,
        }
        print(json.dumps(data, indent=2, sort_keys=True))
        return 0 if report.ok else 1
    for name, seconds in sorted(report.import_seconds.items()):
        print(f"  {name:<20} imported in {seconds * 1000:.1f} ms")
    for f in report.findings:
        print(f"{f.level}: {f.topic}: {f.message}")
    print(
        "ok: no problems found"
        if report.clean
        else ("ok (with warnings)" if report.ok else "problems found")
    )
    return 0 if report.ok else 1


def _sandbox_report(report: Any, name: str, loaded: Any) -> None:
    """Whether an isolated pack's sandbox, process-tree kill and network rule are in force."""
    from toolpacks.packs.sandbox import report as sandbox_report

    source = getattr(getattr(loaded.closer, "__self__", None), "source", None)
    limits = getattr(source, "limits", None)
    if limits is not None:
        level, line = sandbox_report(limits.sandbox, limits.network)
        report.add(level, f"pack {name}", line)
