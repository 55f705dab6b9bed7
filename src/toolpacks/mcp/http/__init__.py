"""MCP over streamable HTTP: the ASGI app, its guards and metrics, and the worker supervisor.

Stateless: any worker or replica answers any request. Every ``tools/call`` goes through the
same handler as over stdio (``toolpacks.mcp._server``).
"""
