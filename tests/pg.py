"""A throwaway PostgreSQL server for the tests: started from the server binaries, never a system service.

One cluster per test session (`postgres_cluster`), a fresh database per test (`postgres_url`), and private
clusters for tests that stop their server (`PostgresCluster.launch()`). Each cluster lives in its own temporary
directory with its socket, listens on a free loopback port and runs with fsync off: speed over durability, since
nothing outlives the session. PostgreSQL refuses to run as root, so under root (CI, containers) it runs as the
`postgres` system user.

Missing binaries skip the tests with the reason, except under CI (env CI set), where that is a failure: the
PostgreSQL tests must never be skipped there (.ci/run installs Debian's postgresql).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SUPERUSER = "postgres"
START_DEADLINE = 30.0
STOP_DEADLINE = 30.0
# Where the server binaries are looked for after PATH: a local install, then Debian's (newest first).
SEARCH = (Path("/usr/local/bin"), Path("/usr/local/pgsql/bin"))
DEBIAN = Path("/usr/lib/postgresql")
SERVER_SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "32MB",
    "max_connections": "200",
    "log_min_messages": "warning",
}


class PostgresUnavailable(Exception):
    """The binaries (or a user to run them as) are missing: the message says what to install or create."""


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def find_bindir() -> Path:
    """The directory holding both `initdb` and `postgres`: PATH first, then /usr/local, then Debian's."""
    candidates: list[Path] = []
    found = shutil.which("initdb")
    if found:
        candidates += [Path(found).parent, Path(found).resolve().parent]
    candidates += SEARCH
    if DEBIAN.is_dir():
        versions = [p for p in DEBIAN.iterdir() if p.name.isdigit()]
        candidates += [p / "bin" for p in sorted(versions, key=lambda p: int(p.name), reverse=True)]
    for directory in candidates:
        if all(os.access(directory / name, os.X_OK) for name in ("initdb", "postgres")):
            return directory
    searched = ", ".join(dict.fromkeys(str(c) for c in [Path("$PATH"), *candidates]))
    raise PostgresUnavailable(
        f"PostgreSQL server binaries (initdb, postgres) not found in {searched}: "
        "install them (Debian: apt-get install postgresql-15) to run the PostgreSQL tests."
    )


def _run_as() -> pwd.struct_passwd | None:
    """The user the server runs as: None (ourselves) unless we are root, which PostgreSQL refuses."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        raise PostgresUnavailable(
            "the tests run as root and PostgreSQL refuses to run as root, but there is no 'postgres' system user "
            "to run it as: install Debian's postgresql package (it creates the user) or run the tests as a "
            "normal user."
        ) from None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _chown_tree(root: Path, owner: pwd.struct_passwd | None) -> None:
    if owner is None:
        return
    for path in [root, *root.rglob("*")]:
        os.lchown(path, owner.pw_uid, owner.pw_gid)


_pristine: dict[Path, Path] = {}  # bindir -> an initdb'ed data directory, copied for each cluster


def _initdb(bindir: Path, owner: pwd.struct_passwd | None) -> Path:
    """A freshly initialised data directory, made once per test process and copied afterwards (initdb is ~1 s)."""
    if bindir not in _pristine:
        root = Path(tempfile.mkdtemp(prefix="th-pg-template-", dir=_temp_base(owner)))
        atexit.register(shutil.rmtree, root, True)
        _chown_tree(root, owner)
        data = root / "data"
        result = subprocess.run(
            [str(bindir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust", "--no-sync",
             "-E", "UTF8", "--locale=C", "--no-instructions"],
            cwd=root, capture_output=True, text=True, timeout=120, **_as_user(owner),
        )  # fmt: skip
        if result.returncode != 0:
            shutil.rmtree(root, ignore_errors=True)
            raise RuntimeError(f"initdb failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        _pristine[bindir] = data
    return _pristine[bindir]


def _temp_base(owner: pwd.struct_passwd | None) -> str | None:
    """/tmp when the server runs as another user (it cannot enter root's TMPDIR); short either way, since a
    unix socket path is limited to ~100 bytes."""
    return "/tmp" if owner is not None else None


def _as_user(owner: pwd.struct_passwd | None) -> dict[str, Any]:
    return {} if owner is None else {"user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": []}


class PostgresCluster:
    """One running PostgreSQL server in a temporary directory. `launch()` starts one; `stop()` removes it."""

    def __init__(self, bindir: Path, owner: pwd.struct_passwd | None) -> None:
        self.bindir = bindir
        self.owner = owner
        self.root = Path(tempfile.mkdtemp(prefix="th-pg-", dir=_temp_base(owner)))  # holds the socket too
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._names = itertools.count(1)

    @classmethod
    def launch(cls) -> PostgresCluster:
        """A new running cluster; raises PostgresUnavailable when this machine cannot run one."""
        cluster = cls(find_bindir(), _run_as())
        try:
            shutil.copytree(_initdb(cluster.bindir, cluster.owner), cluster.data, symlinks=True)
            cluster.data.chmod(0o700)
            _chown_tree(cluster.root, cluster.owner)
            cluster.start()
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def start(self, port: int | None = None) -> None:
        """Start the server (again, after stop(keep=True)) on `port` or a free one; returns once it accepts
        connections. Restarting on the same port is what clients of a restarted database server see."""
        for _ in range(1 if port else 5):  # another process may take a free port between our probe and its bind
            self.port = port or _free_port()
            settings = [f"-c{k}={v}" for k, v in SERVER_SETTINGS.items()]
            seen = self.log.stat().st_size if self.log.exists() else 0
            with self.log.open("ab") as log:
                self.process = subprocess.Popen(
                    [str(self.bindir / "postgres"), "-D", str(self.data), "-p", str(self.port),
                     "-k", str(self.root), *settings],
                    cwd=self.root, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    **_as_user(self.owner),  # same session: a Ctrl-C of the test run shuts it down too
                )  # fmt: skip
            if self._wait_ready():
                return
            with self.log.open("rb") as log:
                log.seek(seen)
                said = log.read().decode(errors="replace")
            if "could not bind" not in said:
                break
        raise RuntimeError(f"PostgreSQL did not start; its log ({self.log}):\n{self.log.read_text(errors='replace')}")

    def _wait_ready(self) -> bool:
        import psycopg

        assert self.process is not None
        deadline = time.monotonic() + START_DEADLINE
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with psycopg.connect(self.url(), connect_timeout=2):
                    return True
            except psycopg.OperationalError:
                time.sleep(0.02)  # polling a starting server, not waiting for an outcome: there is no event
        self.process.kill()
        self.process.wait()
        return False

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql)

    def create_database(self, prefix: str = "t") -> str:
        """A new empty database; returns its URL."""
        name = f"{prefix}_{os.getpid()}_{next(self._names)}"
        self.admin(f"CREATE DATABASE {name} TEMPLATE template0 STRATEGY FILE_COPY")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        self.admin(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")

    def stop(self, keep: bool = False) -> None:
        """Fast shutdown (clients disconnected, no waiting); keep=True leaves the data for start()."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                process.wait(timeout=STOP_DEADLINE)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)


def _unavailable(exc: PostgresUnavailable) -> None:
    if in_ci():
        pytest.fail(f"{exc} (CI is set: the PostgreSQL tests may not be skipped)", pytrace=False)
    pytest.skip(str(exc))


@contextlib.contextmanager
def private_cluster() -> Iterator[PostgresCluster]:
    """A cluster of the test's own, for tests that stop or break their server."""
    try:
        cluster = PostgresCluster.launch()
    except PostgresUnavailable as exc:
        _unavailable(exc)
        raise
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """The test session's PostgreSQL server (skipped without binaries, except under CI)."""
    with private_cluster() as cluster:
        yield cluster


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> Iterator[str]:
    """A URL to a new, empty database of its own on the session's server."""
    url = postgres_cluster.create_database()
    yield url
    postgres_cluster.drop_database(url)
