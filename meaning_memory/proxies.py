"""Whose address a request comes from: the peer's, unless the peer is a proxy the operator
trusts (``MM_TRUSTED_PROXIES``: addresses or networks, none by default), whose
``X-Forwarded-For`` then names the client. The login brake, fair use's per-address limits and
``/metrics``'s loopback rule all read that one address.

The web server is told to trust no proxy header itself (``serve`` runs uvicorn with
``--no-proxy-headers``; uvicorn's default trusts any header from 127.0.0.1, so a client on the
same machine, or behind a proxy that passes the header on, could name any address it liked):
the decision is the app's, from its settings, whichever server runs it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

#: What ``serve`` tells uvicorn: no proxy header is the server's to read.
SERVER_OPTIONS = ("--no-proxy-headers",)


def client_addresses(app: Any) -> Any:
    """``app`` reading ``X-Forwarded-For`` (and ``X-Forwarded-Proto``) from the trusted proxies
    only; ``app`` itself when none is configured."""
    trusted = list(settings.MM_TRUSTED_PROXIES)
    if not trusted:
        return app
    return ProxyHeadersMiddleware(app, trusted_hosts=trusted)
