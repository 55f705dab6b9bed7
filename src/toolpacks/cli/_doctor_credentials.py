"""What ``toolpacks doctor`` says about ``[credentials]``: names and counts, never values.

For each ``[credentials.NAME]``: its kind and how many subjects have a value stored. The
store is opened with its key (a wrong key is an error line saying what to set, not a crash);
the default store is never made by ``doctor`` (no file appears where there was none). An
``oauth2`` entry whose ``client_id`` or ``client_secret`` names an unset variable is flagged.
Only ``list`` is asked of the store: no value is read, so none can be shown.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from toolpacks.host._host import Host
    from toolpacks.host.credentials._settings import CredentialConfig

__all__ = ["credential_findings"]

Add = Callable[[Literal["error", "warning", "info"], str, str], None]


def credential_findings(host: Host, add: Add, environ: Mapping[str, str] | None = None) -> None:
    """Add one finding per configured credential (and one for the store) through ``add``.

    Args:
        host: The host whose configuration and packs are checked.
        add: ``Report.add``: level, topic, message.
        environ: Where ``{ env = ... }`` values are read (``os.environ`` by default).
    """
    configs = host.config.config.credentials
    if not configs:
        return
    env = os.environ if environ is None else environ
    counts = _stored_counts(host, add)
    for name, config in sorted(configs.items()):
        topic = f"credential {name}"
        for key, variable in _unset_variables(config, env):
            add(
                "warning",
                topic,
                f"[credentials.{name}].{key} reads the environment variable {variable!r}, "
                "which is not set: connecting and refreshing this credential will fail until "
                "it is",
            )
        if counts is None:
            add("info", topic, f"kind {config.kind}; stored values not counted (see above)")
            continue
        held = counts.pop(name, 0)
        who = "1 subject has a value" if held == 1 else f"{held} subjects have a value"
        add("info", topic, f"kind {config.kind}; {who}")
    for name, held in sorted((counts or {}).items()):
        add(
            "warning",
            f"credential {name}",
            f"the store holds values of {held} subject(s) for {name!r}, which no "
            f"[credentials.{name}] table defines; remove them with `toolpacks credentials "
            f"delete {name} --subject S`, or add the table",
        )


def _stored_counts(host: Host, add: Add) -> Counter[str] | None:
    """Subjects with a value, per credential name; None (and an error finding) if unreadable."""
    from toolpacks.host.credentials._store import (
        CredentialStoreError,
        SqliteCredentialStore,
        state_dir,
    )

    hook = getattr(getattr(host, "_pm", None), "hook", None)
    supplied = None if hook is None else hook.toolpacks_credential_store()
    if supplied is None and not (state_dir() / "credentials.db").exists():
        add(
            "info",
            "credentials",
            f"no value stored yet (the store {state_dir() / 'credentials.db'} is made by the "
            "first `toolpacks credentials set` or `login`)",
        )
        return Counter()
    try:
        store = supplied if supplied is not None else SqliteCredentialStore()
        entries: list[Any] = list(store.list())
    except CredentialStoreError as exc:
        add("error", "credentials", f"the credential store cannot be used: {exc}")
        return None
    except Exception as exc:  # a pack's store: its fault is a finding, not a crash
        add("error", "credentials", f"the credential store failed ({type(exc).__name__})")
        return None
    where = store.path if isinstance(store, SqliteCredentialStore) else type(store).__name__
    add("info", "credentials", f"the store {where} opens with its key")
    return Counter(entry.name for entry in {(e.name, e.subject): e for e in entries}.values())


def _unset_variables(config: CredentialConfig, env: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(key, variable)`` of ``client_id``/``client_secret`` naming an unset variable."""
    found = []
    for key in ("client_id", "client_secret"):
        value = getattr(config, key)
        unset = isinstance(value, dict) and "default" not in value and "env" in value
        if unset and value["env"] not in env:
            found.append((key, value["env"]))
    return found
