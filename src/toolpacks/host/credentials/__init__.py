"""Tools that act for the user: per-user credentials, stored encrypted, never crossed.

``_settings`` is the ``[credentials.NAME]`` table, ``_store`` the default encrypted SQLite
store, ``_oauth`` the OAuth 2 flows (authlib), ``_vault`` what a toolset uses to resolve a
tool's declared credentials for the call's principal.
"""
