"""Packs from MCP servers: ``[mcp_servers.NAME]`` mounted as a pack.

A server's specification and trust fingerprint, its transport (stdio or streamable HTTP), a
connection that restarts with backoff, the remote tools as ``Tool`` objects, their results,
approvals through elicitation, and ``tools/list_changed``.
"""
