"""What the benchmarks measure beside their own calls: the machine they ran on and the CPU and memory
its processes used, read through psutil (one place; no bench parses /proc itself).

CPU figures are seconds of CPU time; a bench divides the difference of two readings by the wall time
between them to get *cores in use*.
"""

from __future__ import annotations

import math
import os
import platform
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil


def machine() -> dict[str, Any]:
    """Cores this process may use, CPU model, RAM, kernel, Python and grpcio versions."""
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:  # the model name: psutil does not report it
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    import grpc

    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_model": cpu or platform.processor() or "unknown",
        "mem_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "grpcio": grpc.__version__,
    }


def code_version() -> dict[str, Any]:
    """The commit under test and how many files of the server differ from it (read-only git calls)."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=Path(__file__).resolve().parent.parent, capture_output=True,
                                  text=True, timeout=10, check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    changed = git("status", "--porcelain", "--", "gateway", "store", "poller", "protos", "hive")
    return {"commit": git("rev-parse", "--short", "HEAD"),
            "server_files_changed": len(changed.splitlines()) if changed else 0}


class MachineWindow:
    """The machine's state over a measured window: 1-minute load average at its start and end, and the
    share of all cores busy (every process on the machine, other users' included) in between."""

    def __init__(self) -> None:
        self.load_before = load_average()
        self.load_after = math.nan
        self._busy, self._total = machine_busy_s(), machine_total_s()
        self.busy_share = math.nan

    def close(self) -> MachineWindow:
        self.load_after = load_average()
        self.busy_share = (machine_busy_s() - self._busy) / max(machine_total_s() - self._total, 0.01)
        return self

    def as_dict(self) -> dict[str, float]:
        return {"loadavg1_before": self.load_before, "loadavg1_after": self.load_after,
                "machine_busy": self.busy_share}


def describe_load(load: dict[str, float], nproc: int) -> str:
    """One sentence on the machine while a figure was measured, from `MachineWindow.as_dict()`."""
    return (f"1-minute load average {load['loadavg1_before']:.1f} before, {load['loadavg1_after']:.1f} after; "
            f"CPU busy {100 * load['machine_busy']:.0f}% of all {nproc} cores over the run (everything on the "
            "machine, other users' processes included)")


def load_average() -> float:
    """The 1-minute load average."""
    return psutil.getloadavg()[0]


def machine_busy_s() -> float:
    """CPU seconds the whole machine spent neither idle nor waiting for I/O, all cores, since boot."""
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0) - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)


def machine_total_s() -> float:
    """CPU seconds of every kind (idle included), all cores, since boot."""
    t = psutil.cpu_times()
    return sum(t) - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)


def machine_load(seconds: float = 0.5) -> float:
    """Cores busy over the next `seconds` (blocks)."""
    a = machine_busy_s()
    time.sleep(seconds)
    return (machine_busy_s() - a) / seconds


def wait_quiet(max_cores: float, timeout_s: float, window_s: float = 5.0) -> bool:
    """Wait until the machine is at most `max_cores` busy over `window_s`, for at most `timeout_s`; True
    when it got quiet (blocks)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if machine_load(window_s) <= max_cores:
            return True
    return False


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process (0.0 when it is gone)."""
    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return t.user + t.system


def processes() -> dict[int, tuple[int, float, float]]:
    """pid -> (parent pid, own CPU seconds, CPU seconds of its exited children) of every visible process."""
    out: dict[int, tuple[int, float, float]] = {}
    for p in psutil.process_iter(["ppid", "cpu_times"]):
        t = p.info["cpu_times"]
        if t is not None and p.info["ppid"] is not None:
            out[p.pid] = (p.info["ppid"], t.user + t.system, t.children_user + t.children_system)
    return out


def tree_cpu_s(*roots: int) -> float:
    """CPU seconds of the `roots` and every live descendant, including what their exited children used
    (a daemonized process, such as the embedded PostgreSQL's postmaster, must be a root of its own)."""
    procs = processes()
    wanted = {r for r in roots if r > 0}
    total = 0.0
    for pid, (_, own, children) in procs.items():
        p = pid
        while p > 1 and p not in wanted:
            p = procs[p][0] if p in procs else 0
        if p in wanted:
            total += own + children
    return total


def postmaster_pid(data_dir: Path) -> int:
    """The postmaster of the PostgreSQL data directory `data_dir` (0 when it is not running)."""
    try:
        return int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def parent_pid(pid: int) -> int:
    """The parent of a process (0 when it is gone or not visible)."""
    try:
        return psutil.Process(pid).ppid()
    except psutil.Error:
        return 0


def is_postgres(pid: int) -> bool:
    try:
        return psutil.Process(pid).name() in ("postgres", "postmaster")
    except psutil.Error:
        return False


def rss_bytes(pid: int) -> int:
    """Resident set size of a process now."""
    return int(psutil.Process(pid).memory_info().rss)


def peak_rss_bytes(pid: int) -> int:
    """The highest resident set size of a process so far (VmHWM: psutil does not report it on Linux)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


@dataclass
class CpuSnapshot:
    """CPU seconds used so far by the parties of a run: the machine, a gateway, a PostgreSQL server (its
    postmaster and backends), the load generator (this process and its other children)."""

    at: float
    machine_s: float
    gateway_s: float
    postgres_s: dict[int, float]
    generator_s: dict[int, float]
    self_s: float


def cpu_snapshot(gateway_pid: int, postmaster: int | None) -> CpuSnapshot:
    procs = processes()
    me = os.getpid()
    gateway = procs[gateway_pid][1] if gateway_pid in procs else 0.0
    postgres = {}
    if postmaster is not None:
        postgres = {pid: cpu for pid, (ppid, cpu, _) in procs.items() if pid == postmaster or ppid == postmaster}
    generator = {pid: cpu for pid, (ppid, cpu, _) in procs.items() if ppid == me and pid != gateway_pid}
    t = os.times()
    return CpuSnapshot(time.monotonic(), machine_busy_s(), gateway, postgres, generator, t.user + t.system)


def cpu_usage(a: CpuSnapshot, b: CpuSnapshot) -> dict[str, float]:
    """Cores in use between two snapshots (CPU seconds / wall seconds), by party."""
    wall = b.at - a.at
    if wall <= 0:
        return {}
    pg = sum(cpu - a.postgres_s.get(pid, 0.0) for pid, cpu in b.postgres_s.items())
    gen = sum(cpu - a.generator_s.get(pid, 0.0) for pid, cpu in b.generator_s.items()) + (b.self_s - a.self_s)
    out = {
        "wall_s": wall,
        "machine": (b.machine_s - a.machine_s) / wall,
        "gateway": (b.gateway_s - a.gateway_s) / wall,
        "generator": gen / wall,
    }
    out["postgres"] = pg / wall if b.postgres_s else float("nan")
    # Clamped: the parts are read a few ms apart, so an idle remainder can come out at -0.0x.
    out["other"] = max(0.0, out["machine"] - out["gateway"] - out["generator"]
                       - (0.0 if math.isnan(out["postgres"]) else out["postgres"]))
    return out
