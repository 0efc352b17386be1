"""Streamable HTTP: the address to bind, the bearer-token check, and the uvicorn server around the SDK's app.

The SDK's own auth hook (``AuthSettings`` plus a ``TokenVerifier``) is OAuth 2.1 resource-server
machinery (an issuer URL, protected-resource metadata); a shared secret needs none of it, so a
small ASGI middleware checks ``Authorization: Bearer <token>`` on every HTTP request instead.
"""

from __future__ import annotations

import hmac
import json

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from .._net import DEFAULT_HOST, MIN_TOKEN_CHARS, NEW_TOKEN, Listen, require_token
from ..errors import UsageError

__all__ = [
    "DEFAULT_HOST",
    "MIN_TOKEN_CHARS",
    "TOKEN_ENV",
    "Address",
    "BearerAuth",
    "check_token",
    "serve_http",
    "transport_security",
]

TOKEN_ENV = "ELASTIC_MEMORY_MCP_TOKEN"


class Address(Listen):
    """Where the HTTP server listens; clients connect to :attr:`url`."""

    path = "/mcp"

    @classmethod
    def parse(cls, text: str) -> Address:
        """``HOST:PORT``, ``[IPv6]:PORT``, ``:PORT`` or ``PORT`` (host 127.0.0.1).

        >>> Address.parse("8765"), Address.parse("0.0.0.0:80").host, Address.parse("[::1]:9").host
        (Address(host='127.0.0.1', port=8765), '0.0.0.0', '::1')
        """
        host, sep, port = text.rpartition(":") if ":" in text else ("", "", text)
        host = host.strip("[]") or DEFAULT_HOST
        if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536 or (sep and not port):
            msg = f"--http takes HOST:PORT (such as 127.0.0.1:8765) or a port, got {text!r}"
            raise UsageError(msg)
        return cls(host, int(port))


def check_token(address: Address, token: str | None) -> str | None:
    """The token to require, or ``None``; refuses a missing token off loopback and a short one anywhere.

    Raises:
        UsageError: ``address`` is not loopback and there is no token, or the token is too short.
    """
    missing = (
        f"--http {address.host}:{address.port} is reachable from other machines: pass --token TOKEN "
        f"or set {TOKEN_ENV} (clients send 'Authorization: Bearer TOKEN'); make one with {NEW_TOKEN}"
    )
    return require_token(address, token, missing=missing)


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``, else 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.allowed(scope):  # lifespan events pass through
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": "invalid_token", "error_description": "send Authorization: Bearer TOKEN"})
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="elastic-memory"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body.encode()})

    def allowed(self, scope: Scope) -> bool:
        given = [value for name, value in scope["headers"] if name == b"authorization"]
        return len(given) == 1 and hmac.compare_digest(given[0], self.expected)


def transport_security(address: Address) -> TransportSecuritySettings | None:
    """DNS-rebinding protection for a loopback address: only its own Host (and Origin) names are answered.

    The SDK turns it on by itself only for 127.0.0.1, localhost and ::1; any loopback address
    (127.0.0.2, ...) needs it, or a web page whose name resolves there could call the tools.
    Off loopback there is none: the bearer token guards the server instead.

    >>> transport_security(Address("127.0.0.2", 80)).allowed_hosts[:2]
    ['127.0.0.2', '127.0.0.2:*']
    >>> transport_security(Address("0.0.0.0", 80)) is None
    True
    """
    if not address.loopback:
        return None
    own = f"[{address.host}]" if ":" in address.host else address.host
    names = list(dict.fromkeys([own, "127.0.0.1", "localhost", "[::1]"]))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[h for name in names for h in (name, f"{name}:*")],
        allowed_origins=[o for name in names for o in (f"http://{name}", f"http://{name}:*")],
    )


async def serve_http(server: MCPServer, address: Address, token: str | None) -> None:
    """Serve ``server`` over streamable HTTP at ``address.url`` until interrupted (Ctrl-C, SIGTERM)."""
    import uvicorn  # noqa: PLC0415 - an mcp dependency, needed only here

    app: ASGIApp = server.streamable_http_app(host=address.host, transport_security=transport_security(address))
    if token is not None:
        app = BearerAuth(app, token)
    config = uvicorn.Config(app, host=address.host, port=address.port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()
