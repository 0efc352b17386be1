"""Addresses and tokens shared by the local servers (the MCP server over HTTP and the inspector)."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import ClassVar

from .errors import UsageError

__all__ = ["DEFAULT_HOST", "MIN_TOKEN_CHARS", "NEW_TOKEN", "Listen", "is_loopback", "require_token"]

DEFAULT_HOST = "127.0.0.1"
MIN_TOKEN_CHARS = 16
#: How the messages tell a user to make a token.
NEW_TOKEN = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'
#: A token travels in a URL, a cookie and a header unchanged only in these characters (token_urlsafe's).
_URL_SAFE = re.compile(r"[A-Za-z0-9_.~-]+")


def is_loopback(host: str) -> bool:
    """Whether only this machine can connect to ``host`` (127.0.0.0/8, ::1, localhost).

    >>> is_loopback("127.0.0.2"), is_loopback("::1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Listen:
    """Where a local server listens (``host`` without brackets); clients open :attr:`url`."""

    host: str
    port: int
    #: The path clients open.
    path: ClassVar[str] = "/"

    @property
    def loopback(self) -> bool:
        """Whether only this machine can connect (127.0.0.0/8, ::1, localhost)."""
        return is_loopback(self.host)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"


def require_token(address: Listen, token: str | None, *, missing: str, url_safe: bool = False) -> str | None:
    """The token to require, or ``None``; refuses a missing token off loopback and a short one anywhere.

    ``missing``: the message when ``address`` is not loopback and there is no token.
    ``url_safe``: the token must also travel in a URL and a cookie unchanged.

    Raises:
        UsageError: no token off loopback, a token shorter than :data:`MIN_TOKEN_CHARS`, or (``url_safe``)
            one with other characters than letters, digits, ``-``, ``_``, ``.`` and ``~``.
    """
    token = token or None
    if token is None:
        if not address.loopback:
            raise UsageError(missing)
        return None
    if len(token) < MIN_TOKEN_CHARS:
        msg = f"the token has {len(token)} characters; use at least {MIN_TOKEN_CHARS}, such as {NEW_TOKEN}"
        raise UsageError(msg)
    if url_safe and not _URL_SAFE.fullmatch(token):
        msg = (
            "the token must be letters, digits, '-', '_', '.' and '~' only (it travels in a URL and a cookie); "
            f"make one with {NEW_TOKEN}"
        )
        raise UsageError(msg)
    return token
