"""``serve --http`` as an OAuth 2.1 resource server: tokens, keys, metadata, per-agent tokens.

``_gate`` turns a request's ``Authorization`` header into a principal or a 401 / 403;
``_verify`` checks JWT access tokens (RFC 9068) against the keys ``_jwks`` fetches and caches;
``_static`` holds the bearer tokens written in the configuration; ``_metadata`` is the RFC 9728
protected resource metadata.
"""
