"""``elastic-memory mcp --http``: streamable HTTP in a real subprocess on a free port, and its bearer token.

If a fixture times out waiting for the port, run the command by hand and read its stderr:
``elastic-memory mcp --db /tmp/x.db --embedder none --http 127.0.0.1:8765``. Needs the ``mcp`` extra.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="needs the 'mcp' extra")

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from elastic_memory.errors import UsageError
from elastic_memory.mcp_server import Address

SERVER_CMD = os.path.join(os.path.dirname(sys.executable), "elastic-memory")
TOKEN = secrets.token_urlsafe(24)
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def http_server(
    db: Path, bind: str, *args: str, env: dict[str, str] | None = None, reach: str = "127.0.0.1"
) -> Iterator[str]:
    """Run the server bound to ``bind`` (host) on a free port; yields its URL through ``reach``."""
    port = free_port()
    command = [SERVER_CMD, "mcp", "--db", str(db), "--embedder", "none", "--http", f"{bind}:{port}", *args]
    proc = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **(env or {})}
    )
    try:
        deadline = time.monotonic() + 60
        while True:  # until uvicorn accepts connections
            try:
                socket.create_connection((reach, port), timeout=0.1).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "exited"
                assert time.monotonic() < deadline, "the server did not listen within 60 s"
                time.sleep(0.05)
        yield f"http://{reach}:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if proc.stderr:
            proc.stderr.close()


@contextlib.asynccontextmanager
async def session_at(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def post_status(url: str, authorization: str | None, host: str | None = None) -> int:
    """The HTTP status of a bare initialize POST, with or without an Authorization (or another Host) header."""
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    if authorization is not None:
        request.add_header("Authorization", authorization)
    if host is not None:
        request.add_header("Host", host)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        e.close()
        return int(e.code)


async def test_the_agent_loop_over_http_on_loopback(tmp_path: Path) -> None:
    """Loopback needs no token. If initialize fails with 421, the Host header is not 127.0.0.1/localhost."""
    with http_server(tmp_path / "memory.db", "127.0.0.1") as url:
        async with session_at(url) as session:
            stored = await call(session, "remember", content="The user's dog is called Biscuit.")
            hits = (await call(session, "recall", query="dog", k=3))["hits"]
            await call(session, "record_turn", user="My cat is called Miso.", reply="Noted!", session_id="s1")
            plan = await call(session, "build_context", user_input="what is my cat Miso like?", session_id="s2")
            bad = await session.call_tool("recall", {"query": "dog", "k": 5000})
    assert [h["id"] for h in hits] == [stored["id"]]
    assert "My cat is called Miso." in plan["context"]
    assert bad.is_error


def test_off_loopback_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    """0.0.0.0 reaches other machines: no token, no server (exit 2, the fix on stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "ELASTIC_MEMORY_MCP_TOKEN"}
    done = subprocess.run(
        [SERVER_CMD, "mcp", "--db", str(tmp_path / "m.db"), "--http", f"0.0.0.0:{free_port()}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert "--token" in done.stderr and "ELASTIC_MEMORY_MCP_TOKEN" in done.stderr
    assert not (tmp_path / "m.db").exists()


async def test_off_loopback_every_request_needs_the_bearer_token(tmp_path: Path) -> None:
    """Bound to 0.0.0.0 with the token from the environment: 401 without it or with a wrong one."""
    with http_server(tmp_path / "memory.db", "0.0.0.0", env={"ELASTIC_MEMORY_MCP_TOKEN": TOKEN}) as url:
        assert post_status(url, None) == 401
        assert post_status(url, "Bearer wrong-token-of-some-length") == 401
        assert post_status(url, TOKEN) == 401  # the scheme is required
        async with session_at(url, TOKEN) as session:
            stored = await call(session, "remember", content="Reachable with the token.")
    assert stored["status"] == "created"


async def test_any_loopback_address_refuses_a_foreign_host_header(tmp_path: Path) -> None:
    """Bound to 127.0.0.2 (loopback, no token): a request naming another Host gets 421 (DNS rebinding).

    If this fails with 200, the server did not pass TransportSecuritySettings for that address
    (the SDK enables the check by itself only for 127.0.0.1, localhost and ::1).
    """
    with http_server(tmp_path / "memory.db", "127.0.0.2", reach="127.0.0.2") as url:
        assert post_status(url, None, host="evil.example") == 421
        assert post_status(url, None, host=f"evil.example:{url.split(':')[2].split('/')[0]}") == 421
        async with session_at(url) as session:
            stored = await call(session, "remember", content="Reached through 127.0.0.2.")
    assert stored["status"] == "created"


@pytest.mark.parametrize("text", ["127.0.0.1:\u00b2", "\u0661\u0662", "127.0.0.1:0", "127.0.0.1:65536", "x:"])
def test_a_port_that_is_not_ascii_digits_in_range_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="--http takes HOST:PORT"):
        Address.parse(text)


def test_a_non_ascii_port_fails_with_the_usage_message_not_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [SERVER_CMD, "mcp", "--db", str(tmp_path / "m.db"), "--http", "127.0.0.1:\u00b2"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "--http takes HOST:PORT" in done.stderr and "Traceback" not in done.stderr
