"""loadtest.report's docs sections: a bench's section replaces its old one and nothing else; the machine facts."""

from __future__ import annotations

from pathlib import Path

from loadtest import report


def section(name: str, body: str) -> str:
    start, end = report.markers(name)
    return f"{start}\n{body}\n{end}\n"


def test_the_section_is_replaced_in_place_and_the_rest_kept(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\nintro\n\n" + section("txns", "stale") + "\n" + section("cache", "kept")
                   + section("locks", "also kept"))
    report.write_section(out, "txns", section("txns", "fresh"))
    assert out.read_text() == ("# Benchmarks\n\nintro\n\n" + section("txns", "fresh") + "\n" + section("cache", "kept")
                               + section("locks", "also kept"))
    report.write_section(out, "cache", section("cache", "new"))
    assert out.read_text().endswith(section("cache", "new") + section("locks", "also kept"))
    assert [p.name for p in tmp_path.iterdir()] == ["benchmarks.md"]  # no temporary file left behind


def test_a_missing_section_is_appended_and_a_missing_file_created(tmp_path: Path) -> None:
    out = tmp_path / "docs" / "benchmarks.md"
    report.write_section(out, "spark", section("spark", "one"))
    assert out.read_text() == "# Benchmarks\n\n" + section("spark", "one")
    report.write_section(out, "locks", section("locks", "two"))
    assert out.read_text() == "# Benchmarks\n\n" + section("spark", "one") + "\n" + section("locks", "two")


def test_markers_match_the_ones_in_the_docs() -> None:
    assert report.markers("txns") == ("<!-- bench:txns:start -->", "<!-- bench:txns:end -->")


def test_machine_facts() -> None:
    m = report.machine()
    assert m["nproc"] >= 1 and m["cpu_model"] and m["mem_gib"] > 0
    assert {"kernel", "python", "grpcio"} <= set(m)
