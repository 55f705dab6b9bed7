"""Who may use which tool of a toolset: scopes, each principal's view, and the audit log.

``_scopes`` evaluates, once per toolset, which scopes each exposed tool needs (its own
``@tool(scopes=...)`` plus the agent's ``tool_scopes`` globs) and which the agent needs
(``[agents.NAME] scopes``); ``_view`` gives ``Toolset.for_principal`` and the check every
call passes; ``_audit`` writes one record per call to the ``toolpacks.audit`` logger.

Import from the modules (``toolpacks.host.identity._audit.audit_refusal``): this package
imports nothing itself, so ``Toolset`` (which builds on ``_view``) stays light to import.
"""
