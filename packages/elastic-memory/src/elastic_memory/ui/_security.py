"""Who may talk to the inspector: the address it binds, its token, the Host check and CSRF.

The trust model, as ``elastic-memory mcp`` has it: on loopback (the default) only this machine
connects, and a Host header naming anything but a loopback name is refused (a web page whose
name resolves to 127.0.0.1 cannot read the store: DNS rebinding). Off loopback a token is
required; the browser presents it once as ``?token=...`` and then carries it in a cookie.
Every form carries a per-process CSRF token, and a POST whose Origin is another site is refused.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._net import DEFAULT_HOST, MIN_TOKEN_CHARS, NEW_TOKEN, Listen, require_token
from ..errors import UsageError

__all__ = ["COOKIE", "DEFAULT_HOST", "MIN_TOKEN_CHARS", "TOKEN_ENV", "Address", "Guard", "check_token"]

TOKEN_ENV = "ELASTIC_MEMORY_UI_TOKEN"
COOKIE = "elastic_memory_ui_token"
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
#: Sent with every response: scripts, styles and forms only from the inspector itself.
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would make forms send "Origin: null"
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


class Address(Listen):
    """Where the inspector listens; the browser opens :attr:`url`."""

    @classmethod
    def parse(cls, host: str, port: int) -> Address:
        """Check ``host`` and ``port`` (1 to 65535).

        >>> Address.parse("127.0.0.1", 8700).url
        'http://127.0.0.1:8700/'
        """
        host = host.strip().strip("[]")
        if not host or any(c.isspace() or c in "/?#@" for c in host):
            msg = f"--host takes a host name or an IP address (such as 127.0.0.1), got {host!r}"
            raise UsageError(msg)
        if not 0 < port < 65536:
            msg = f"--port takes a port from 1 to 65535, got {port}"
            raise UsageError(msg)
        return cls(host, port)


def check_token(address: Address, token: str | None) -> str | None:
    """The token to require, or ``None``: none off loopback, a short one or one unfit for a URL are refused.

    Raises:
        UsageError: ``address`` is not loopback and there is no token, or the token is too short or has
            other characters than letters, digits, ``-``, ``_``, ``.`` and ``~``.
    """
    missing = (
        f"--host {address.host} is reachable from other machines: pass --token TOKEN or set {TOKEN_ENV} "
        f"(open the printed URL once, with ?token=TOKEN); make one with {NEW_TOKEN}"
    )
    return require_token(address, token, missing=missing, url_safe=True)


def _allowed_hosts(address: Address | None) -> frozenset[str] | None:
    """The Host names answered on loopback; ``None`` (any) off loopback, where the token guards."""
    if address is not None and not address.loopback:
        return None
    own = [] if address is None else [f"[{address.host}]" if ":" in address.host else address.host]
    return frozenset([*own, *_LOOPBACK_NAMES])


def _host_name(host: str) -> str:
    """``example.com:80`` -> ``example.com``; ``[::1]:80`` -> ``[::1]``."""
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def _origin_host(origin: str) -> str | None:
    """``http://127.0.0.1:8700`` -> ``127.0.0.1:8700``; ``None`` for an Origin that is not a URL."""
    try:
        return urlsplit(origin).netloc
    except ValueError:  # such as "http://[evil": refused, not a server error
        return None


@dataclass
class Guard:
    """ASGI middleware: the Host check, the token, the Origin check on writes, and the security headers.

    Attributes:
        app: The inspector's routes.
        address: Where it listens (``None``: in-process, such as a test client: loopback rules).
        token: The token required, or ``None``.
        csrf: The per-process secret every form carries as ``csrf``.
        cookie: The token cookie's name; it names the port, since browsers send a host's cookies to
            every port of it (two inspectors on one machine keep their own tokens).
    """

    app: ASGIApp
    address: Address | None = None
    token: str | None = None
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    def __post_init__(self) -> None:
        self.hosts = _allowed_hosts(self.address)
        self.cookie = COOKIE if self.address is None else f"{COOKIE}_{self.address.port}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # a WebSocket: the inspector has none, and it would skip every check
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await _plain(send, *refusal)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        if self.token is not None and "token" in query and scope["method"] == "GET":
            await self._token_redirect(scope, query, send)
            return
        scope.setdefault("state", {})["csrf"] = self.csrf

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, secured)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        host = headers.get("host", "")
        if self.hosts is not None and _host_name(host).lower() not in self.hosts:
            return 421, f"Host {host!r} is not this inspector's address; open it as http://127.0.0.1:PORT/"
        if self.token is not None and not self._authorized(scope, headers):
            return 401, "This inspector needs its token: open the URL it printed, with ?token=TOKEN"
        origin = headers.get("origin")
        if scope["method"] not in ("GET", "HEAD") and origin is not None and _origin_host(origin) != host:
            return 403, f"a form from another site ({origin}) cannot write to this inspector"
        return None

    def _authorized(self, scope: Scope, headers: dict[str, str]) -> bool:
        assert self.token is not None
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        cookies = cookie_parser(headers.get("cookie", ""))  # lenient: other apps' cookies never hide ours
        given = [
            headers.get("authorization", "").removeprefix("Bearer "),
            cookies.get(self.cookie, ""),
            query.get("token", "") if scope["method"] == "GET" else "",
        ]
        return any(g and hmac.compare_digest(g.encode(), self.token.encode()) for g in given)

    async def _token_redirect(self, scope: Scope, query: dict[str, str], send: Send) -> None:
        """Keep the token in a cookie and drop it from the address bar (and from history).

        The path goes back percent-encoded, with one leading slash: ``//host`` would leave the inspector.
        """
        rest = urlencode({k: v for k, v in query.items() if k != "token"})
        location = "/" + _sent_path(scope) + (f"?{rest}" if rest else "")
        cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
        start = {
            "type": "http.response.start",
            "status": 303,
            "headers": [(b"location", location.encode()), (b"set-cookie", cookie.encode()), *SECURITY_HEADERS],
        }
        await send(start)
        await send({"type": "http.response.body", "body": b""})


def _sent_path(scope: Scope) -> str:
    """The path as the client sent it, re-encoded segment by segment, without its leading slashes.

    An encoded ``/`` inside a segment (a memory id's) stays encoded; leading slashes go, encoded
    or not, so the redirect cannot name another host.
    """
    raw = scope.get("raw_path")
    sent = raw.decode("latin-1") if isinstance(raw, bytes) else quote(scope["path"], safe="/")
    path = "/".join(quote(unquote(part), safe="") for part in sent.split("/"))
    while path.startswith(("/", "%2F")):
        path = path.removeprefix("/").removeprefix("%2F")
    return path


def csrf_ok(expected: str, given: str | None) -> bool:
    """Whether a form's ``csrf`` field is this process's token."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


async def _plain(send: Send, status: int, text: str) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text.encode()})
