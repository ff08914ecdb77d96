"""A throwaway PostgreSQL cluster for the tests: Debian's server binaries, a temp folder, a free
port on 127.0.0.1, its unix socket in that folder; stopped and deleted at the end.

``initdb``/``pg_ctl`` refuse to run as root: as root they run as the ``postgres`` system user
(``runuser -u postgres --``) in a folder it owns. Each test gets its own schema
(:meth:`PostgresCluster.fresh_url`: a connection string whose ``search_path`` is that schema), which
is much cheaper than a database per test and isolates just as well.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from urllib.parse import quote


def find_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresCluster:
    def __init__(self) -> None:
        initdb, pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
        if initdb is None or pg_ctl is None:
            raise RuntimeError("PostgreSQL server binaries not found (initdb, pg_ctl): run scripts/setup.sh --browser")
        self.initdb, self.pg_ctl = initdb, pg_ctl
        self.root = Path(tempfile.mkdtemp(prefix="arcana-pg-"))
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self.data = self.root / "data"
        self.port = 0
        self._counter = itertools.count(1)
        self._started = False

    def _run(self, *args: str) -> None:
        subprocess.run([*self.prefix, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=120)

    def start(self) -> PostgresCluster:
        self._run(self.initdb, "-D", str(self.data), "-A", "trust", "-U", "arcana", "-E", "UTF8", "--no-sync")
        options = (
            "-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            f"-k {self.root}"
        )
        last: Exception | None = None
        for _ in range(3):  # the free port may be taken between choosing and binding it
            self.port = _free_port()
            try:
                self._run(self.pg_ctl, "-D", str(self.data), "-o", f"-p {self.port} {options}",
                          "-l", str(self.root / "server.log"), "-w", "-t", "60", "start")
                self._started = True
                break
            except subprocess.CalledProcessError as exc:
                last = exc
        if not self._started:
            raise RuntimeError(f"PostgreSQL did not start: {last}; log: {self.log_tail()}")
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute("CREATE DATABASE arcana")
        return self

    def log_tail(self) -> str:
        try:
            return (self.root / "server.log").read_text()[-2000:]
        except OSError:
            return ""

    def url(self, database: str = "arcana", *, user: str = "arcana", password: str | None = None) -> str:
        auth = user if password is None else f"{user}:{quote(password, safe='')}"
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{database}"

    def fresh_url(self, **kw: str) -> str:
        """A connection string to a new, empty schema of its own (``search_path`` set in ``options``)."""
        import psycopg

        schema = f"t{next(self._counter)}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return f"{self.url(**kw)}?options=-csearch_path%3D{schema}"

    def stop(self) -> None:
        if self._started:
            # best effort at teardown: a cluster that is already gone needs no stop, and the folder is removed anyway
            with contextlib.suppress(subprocess.SubprocessError, OSError):
                self._run(self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop")
            self._started = False
        shutil.rmtree(self.root, ignore_errors=True)
