"""The README's examples as a test runs them: every fenced block carries an annotation saying how.

    <!-- example: python -->          run with this Python, from the repository
    <!-- example: sh -->              run with bash -eu, from the repository ($MSGW_ADDRESS set)
    <!-- example: sh (needs grpcurl) --> the same, skipped (and said so) where grpcurl is not installed
    <!-- example: output -->          what the block before printed (compared after `normalize`)
    <!-- example: toml -->            a settings file: `metastore-gateway settings --config` must accept it
    <!-- example: spark -->           Python run in the test's SparkSession (tests/spark/test_readme.py)
    <!-- example: spark-process -->   Python run as its own Spark process (SLOW=1)
    <!-- example: spark-submit -->    sh that runs spark-submit (SLOW=1)
    <!-- example: skip (why) -->      not run; the reason is required
    "(after spark)" in a note: the block needs what a Spark example before it wrote, so only the
    Spark run (tests/spark/test_readme.py) runs it.

A block without an annotation fails the test, so no example escapes it. The examples use the
default addresses and /tmp/lake; a run puts its own gateway's addresses and a directory of its own
in their place (other runs may share the machine), and puts them back before comparing output.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
KINDS = {"python", "sh", "output", "toml", "spark", "spark-process", "spark-submit", "skip"}
_ANNOTATION = re.compile(r"<!-- example: ([\w-]+)(?: \((.+)\))? -->")


@dataclass(frozen=True)
class Example:
    kind: str
    note: str
    code: str
    line: int  # of the opening fence, 1-based


def examples(path: Path = README) -> list[Example]:
    """Every fenced block of `path` with its annotation; ValueError naming an unannotated one."""
    lines = path.read_text().splitlines()
    found: list[Example] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            start = i
            annotation = _ANNOTATION.fullmatch(lines[i - 1].strip()) if i > 0 else None
            i += 1
            body = []
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            if annotation is None or annotation.group(1) not in KINDS:
                raise ValueError(f"README.md:{start + 1}: a code block without an `<!-- example: KIND -->` line "
                                 f"before it (kinds: {', '.join(sorted(KINDS))})")
            if annotation.group(1) == "skip" and not annotation.group(2):
                raise ValueError(f"README.md:{start + 1}: `skip` needs its reason: <!-- example: skip (why) -->")
            found.append(Example(annotation.group(1), annotation.group(2) or "", "\n".join(body) + "\n", start + 1))
        i += 1
    return found


@dataclass
class Runner:
    """Runs examples against one gateway; `last_output` is what the last command printed."""

    address: str
    thrift_address: str
    lake: Path
    last_output: str = ""
    skipped: list[str] = field(default_factory=list)

    def substitute(self, text: str) -> str:
        return (text.replace("127.0.0.1:50051", self.address).replace("127.0.0.1:9083", self.thrift_address)
                .replace("/tmp/lake", str(self.lake)))

    def restore(self, text: str) -> str:
        return (text.replace(str(self.lake), "/tmp/lake").replace(self.address, "127.0.0.1:50051")
                .replace(self.thrift_address, "127.0.0.1:9083"))

    def env(self) -> dict[str, str]:
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        return {**os.environ, "PATH": path, "MSGW_ADDRESS": self.address, "PYSPARK_PYTHON": sys.executable,
                "SPARK_LOCAL_IP": "127.0.0.1"}

    def run(self, example: Example, timeout_s: float = 180) -> None:
        """Run a python, sh or toml example (or check an output one); AssertionError with the output
        when it fails."""
        code = self.substitute(example.code)
        where = f"README.md:{example.line} ({example.kind})"
        if example.kind == "output":
            assert normalize(self.restore(self.last_output)) == normalize(example.code), (
                f"{where}: the command printed\n{self.restore(self.last_output)}\nbut the README shows\n{example.code}")
            return
        if example.kind == "sh" and "needs grpcurl" in example.note and shutil.which("grpcurl") is None:
            self.skipped.append(f"{where}: grpcurl is not installed")
            return
        if example.kind == "toml":
            config = self.lake / "example.toml"
            config.write_text(code)
            argv = [sys.executable, "-m", "gateway.cli", "settings", "--config", str(config)]
        elif example.kind in ("python", "spark-process"):
            argv = [sys.executable, "-c", code]
        elif example.kind in ("sh", "spark-submit"):
            argv = ["bash", "-eu", "-c", code]
        else:
            raise ValueError(f"{where}: {example.kind} examples are not run by Runner.run")
        done = subprocess.run(argv, cwd=REPO, env=self.env(), capture_output=True, text=True, timeout=timeout_s)
        self.last_output = done.stdout
        assert done.returncode == 0, f"{where} failed (exit {done.returncode}):\n{code}\n{done.stdout}\n{done.stderr}"


def normalize(text: str) -> str:
    """Output as compared: epoch milliseconds are <ms>, runs of spaces one (columns realign with
    widths), blank lines dropped."""
    text = re.sub(r"\b\d{13}\b", "<ms>", text)
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
