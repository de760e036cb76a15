"""What every benchmark writes into docs/benchmarks.md: the machine it ran on, and its own section.

One job: the shared plumbing of the `bench_*` scripts' reports. A bench renders its markdown section
(between `<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->`) and `write_section` puts it in
place of the old one, leaving the rest of the file as it is.
"""

from __future__ import annotations

import os
from pathlib import Path

from loadtest.probes import machine

__all__ = ["machine", "machine_line", "markers", "replace_section", "write_section"]


def machine_line() -> str:
    """The machine in one line, for a report's header and a plot's footer."""
    m = machine()
    return (f"{m['nproc']} cores ({m['cpu_model']}), {m['mem_gib']} GiB, Linux {m['kernel']}, Python {m['python']}, "
            f"grpcio {m['grpcio']}")


def markers(name: str) -> tuple[str, str]:
    """The start and end markers of the bench `name`'s section."""
    return f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"


def replace_section(text: str, name: str, section: str) -> str:
    """`text` with its `name` section replaced by `section` (which includes the markers); appended
    when absent; a new "# Benchmarks" document when `text` is empty."""
    start_marker, end_marker = markers(name)
    start, end = text.find(start_marker), text.find(end_marker)
    if start != -1 and end > start:
        tail = text[end + len(end_marker):]
        return text[:start] + section + (tail[1:] if tail.startswith("\n") else tail)
    if not text.strip():
        return "# Benchmarks\n\n" + section
    return text.rstrip("\n") + "\n\n" + section


def write_section(path: Path, name: str, section: str) -> None:
    """Replace the `name` section of the markdown file `path` (created when missing) by `section`,
    atomically: a temporary file next to it, then os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(replace_section(text, name, section), encoding="utf-8")
    os.replace(tmp, path)
