"""Reports over one or several runs: per target and request name, as CSV, markdown and a PNG plot.

Latencies are reported in milliseconds; `calls_per_s` and `items_per_s` divide by the run's measured
duration (from the common start to the last user's end, so ramp-up is included, as in Locust).
Several targets run one after another compare side by side: `markdown_table` lists them all,
`comparison_table` puts one metric of every target in adjacent columns, and `compare_ratios` gives
e.g. how many times faster the cached gateway's p99 is than the Hive metastore's.

matplotlib is imported only by `plot` (optional extra `bench`), on the headless Agg canvas and
without pyplot's global state.

What every benchmark writes into docs/benchmarks.md goes through here too: a bench renders its markdown
section (between `<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->`, `markers`) and
`write_section` puts it in place of the old one, leaving the rest of the file as it is; `machine_line`
names the machine it ran on.
"""

from __future__ import annotations

import csv
import io
import math
import os
import textwrap
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from loadtest.errors import ConfigError
from loadtest.probes import machine
from loadtest.stats import TOTAL, RequestStats, RunResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "machine", "machine_line", "markers", "produced_by", "replace_section", "table", "write_section",
    "METRICS", "ReportRow", "ReportFiles", "report_rows", "to_csv", "write_csv", "timeseries_csv", "markdown_table",
    "comparison_table", "compare_ratios", "plot", "matplotlib_available", "write_report",
]


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One line of the report: one request name of one target (or `TOTAL` for all of them)."""

    target: str
    name: str
    requests: int
    failures: int
    failure_pct: float
    calls_per_s: float
    items_per_s: float
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    p999_ms: float
    max_ms: float


METRICS: tuple[str, ...] = tuple(f.name for f in fields(ReportRow))[2:]
_HEADERS = {
    "target": "target", "name": "request", "requests": "requests", "failures": "failures", "failure_pct": "fail %",
    "calls_per_s": "calls/s", "items_per_s": "items/s", "mean_ms": "mean ms", "p50_ms": "p50 ms", "p95_ms": "p95 ms",
    "p99_ms": "p99 ms", "p999_ms": "p99.9 ms", "max_ms": "max ms",
}


def _row(target: str, name: str, stats: RequestStats, duration_s: float) -> ReportRow:
    p50, p95, p99, p999 = stats.latency.percentiles((50, 95, 99, 99.9))
    per_s = (lambda n: n / duration_s) if duration_s > 0 else (lambda n: math.nan)
    return ReportRow(
        target=target, name=name, requests=stats.requests, failures=stats.failures,
        failure_pct=100.0 * stats.failures / stats.requests if stats.requests else 0.0,
        calls_per_s=per_s(stats.requests), items_per_s=per_s(stats.items), mean_ms=stats.latency.mean_s * 1e3,
        p50_ms=p50 * 1e3, p95_ms=p95 * 1e3, p99_ms=p99 * 1e3, p999_ms=p999 * 1e3, max_ms=stats.latency.max_s * 1e3,
    )


def report_rows(results: Sequence[RunResult], *, include_total: bool = True) -> list[ReportRow]:
    """Rows in run order; within a target, request names sorted, then the `TOTAL` row."""
    rows = []
    for result in results:
        for name, stats in sorted(result.stats.items()):
            rows.append(_row(result.target, name, stats, result.duration_s))
        if include_total:
            rows.append(_row(result.target, TOTAL, result.total(), result.duration_s))
    return rows


# -- CSV ------------------------------------------------------------------------------------------


def _csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV text with a header; floats rounded to 6 places, NaN (undefined: no requests) as an empty cell."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if isinstance(v, float) and math.isnan(v) else round(v, 6) if isinstance(v, float) else v
                         for v in row])
    return out.getvalue()


def to_csv(results: Sequence[RunResult]) -> str:
    """The report rows as CSV text with a header; empty cells for undefined values (no requests)."""
    return _csv([f.name for f in fields(ReportRow)], (astuple(row) for row in report_rows(results)))


def write_csv(results: Sequence[RunResult], path: str | Path) -> Path:
    path = Path(path)
    path.write_text(to_csv(results), encoding="utf-8")
    return path


def timeseries_csv(results: Sequence[RunResult]) -> str:
    """Per target and stats window: requests/s, failures, items/s and p50/p95/p99 in ms."""
    return _csv(["target", "start_s", "duration_s", "requests_per_s", "failures", "items_per_s", "p50_ms", "p95_ms",
                 "p99_ms"],
                ([result.target, p.start_s, p.duration_s, p.requests_per_s, p.failures, p.items_per_s, p.p50_s * 1e3,
                  p.p95_s * 1e3, p.p99_s * 1e3] for result in results for p in result.series))


# -- markdown -------------------------------------------------------------------------------------


def _fmt(metric: str, value: float | int) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "–"
    if metric in ("requests", "failures"):
        return f"{int(value):,}"
    if metric == "failure_pct":
        return f"{value:.2f}"
    if metric in ("calls_per_s", "items_per_s"):
        return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"
    # milliseconds: three significant digits at most scales
    if value < 1:
        return f"{value:.3f}"
    if value < 100:
        return f"{value:.2f}"
    return f"{value:,.0f}"


def table(header: Sequence[str], rows: Sequence[Sequence[object]], numeric_from: int = 1) -> list[str]:
    """A markdown table as lines: the first `numeric_from` columns left-aligned, the rest right-aligned
    (numbers); every bench's tables in docs/benchmarks.md go through here."""
    align = ["---"] * numeric_from + ["---:"] * (len(header) - numeric_from)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    return lines + ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows]


def _table(header: list[str], rows: list[list[str]], numeric_from: int) -> str:
    return "\n".join(table(header, rows, numeric_from)) + "\n"


def markdown_table(results: Sequence[RunResult], *, include_total: bool | None = None) -> str:
    """A GitHub-flavoured markdown table with one row per target and request name.

    `include_total=None` adds a target's `TOTAL` row only when it does not merely repeat the single
    request row (the CSV always has it)."""
    names = [f.name for f in fields(ReportRow)]
    body = []
    rows = []
    for result in results:
        with_total = include_total if include_total is not None else len(result.stats) != 1
        rows += report_rows([result], include_total=with_total)
    for row in rows:
        values = astuple(row)
        body.append([str(values[0]), str(values[1])] + [_fmt(m, v) for m, v in zip(names[2:], values[2:], strict=True)])
    return _table([_HEADERS[n] for n in names], body, numeric_from=2)


def _check_metric(metric: str) -> None:
    if metric not in METRICS:
        raise ConfigError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")


def comparison_table(results: Sequence[RunResult], metric: str, *, names: Sequence[str] | None = None) -> str:
    """Markdown: one row per request name, one column per target, cells = `metric`."""
    _check_metric(metric)
    by_key = {(r.target, r.name): getattr(r, metric) for r in report_rows(results)}
    targets = [r.target for r in results]
    if names is None:
        seen: dict[str, None] = {}
        for result in results:
            seen.update(dict.fromkeys(sorted(result.stats)))
        names = list(seen) + [TOTAL]
    body = [
        [name] + [_fmt(metric, by_key[(t, name)]) if (t, name) in by_key else "–" for t in targets] for name in names
    ]
    return _table([f"request ({_HEADERS[metric]})"] + targets, body, numeric_from=1)


def compare_ratios(results: Sequence[RunResult], numerator: str, denominator: str, metric: str) -> dict[str, float]:
    """`metric` of target `numerator` divided by that of `denominator`, per request name both
    targets recorded, plus `TOTAL`. NaN where the denominator is zero or undefined.

    E.g. compare_ratios(results, "hive-metastore", "gateway-cached", "p99_ms")["GetTable"] == 12.0
    reads "the metastore's p99 for GetTable is 12x the cached gateway's".
    """
    _check_metric(metric)
    by_target = {r.target: r for r in results}
    for name in (numerator, denominator):
        if name not in by_target:
            raise ConfigError(f"no results for target {name!r}; have {', '.join(by_target)}")
    num_rows = {r.name: getattr(r, metric) for r in report_rows([by_target[numerator]])}
    den_rows = {r.name: getattr(r, metric) for r in report_rows([by_target[denominator]])}
    ratios = {}
    for name, num in num_rows.items():
        if name not in den_rows:
            continue
        den = den_rows[name]
        ratios[name] = num / den if den and not math.isnan(den) and not math.isnan(num) else math.nan
    return ratios


# -- plot -----------------------------------------------------------------------------------------


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def plot(results: Sequence[RunResult], path: str | Path, *, title: str | None = None,
         footer: str = "") -> Path:
    """PNG of requests/s (top) and p50 (solid) / p99 (dashed) latency (bottom) over time, one colour per
    target, both on labelled log axes (targets differ by orders of magnitude: echo floor vs metastore).

    Targets that ran one after another (`RunResult.started_at` set) are laid out on one wall-clock axis,
    each in its own shaded, labelled time window, instead of all starting at zero. Legends sit outside
    the axes so they never cover a line; `footer` (date, commit, machine, its load) goes under the plot.
    Raises ImportError with an install hint without matplotlib."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.layout_engine import ConstrainedLayoutEngine
        from matplotlib.lines import Line2D
    except ImportError as exc:
        raise ImportError("plotting needs matplotlib: pip install 'metastore-gateway[bench]'") from exc

    fig = Figure(figsize=(12, 7.5), dpi=100,
                 layout=ConstrainedLayoutEngine(rect=(0, 0.04, 1, 0.96) if footer else (0, 0, 1, 1)))
    FigureCanvasAgg(fig)
    ax_rate, ax_latency = fig.subplots(2, 1, sharex=True)
    starts = [r.started_at for r in results if r.started_at]
    sequential = len(starts) == len(results) and len(results) > 1
    origin = min(starts) if starts else 0.0
    # Window labels wrap to a narrow column (windows are narrow when many targets share the axis) and
    # alternate between two rows, each as tall as the tallest label, so neighbours never run into each other.
    labels = [textwrap.fill(r.target.replace(" (", "\n("), width=18, break_on_hyphens=False) for r in results]
    row_points = 9 * max(label.count("\n") + 1 for label in labels) + 4
    for i, result in enumerate(results):
        color = f"C{i % 10}"
        offset = result.started_at - origin if sequential else 0.0
        points = [p for p in result.series if p.requests > 0]
        xs = [offset + p.start_s + p.duration_s / 2 for p in points]
        ax_rate.plot(xs, [p.requests_per_s for p in points], color=color, marker=".", label=result.target)
        ax_latency.plot(xs, [p.p50_s * 1e3 for p in points], color=color, linestyle="-", marker=".",
                        label=f"{result.target} p50")
        ax_latency.plot(xs, [p.p99_s * 1e3 for p in points], color=color, linestyle="--", marker="x",
                        label=f"{result.target} p99")
        if sequential:  # each target's own window, labelled, so no one reads them as concurrent
            for ax in (ax_rate, ax_latency):
                ax.axvspan(offset, offset + result.duration_s, color=color, alpha=0.07, linewidth=0)
            ax_rate.annotate(labels[i], xy=(offset + result.duration_s / 2, 1.0),
                             xycoords=("data", "axes fraction"), xytext=(0, 3 + row_points * (i % 2)),
                             textcoords="offset points", ha="center", va="bottom", fontsize="x-small", color=color)
    for ax, label in ((ax_rate, "requests/s (log scale)"), (ax_latency, "latency, ms (log scale)")):
        if any(line.get_xydata().size for line in ax.get_lines()):
            _log_axis(ax, "y")
        ax.set_ylabel(label)
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.1)
    ax_rate.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    # The targets' colours are the rate legend's; the latency legend says which line is which percentile,
    # so it stays two lines long however many targets ran (one line per target and percentile ran off the
    # figure at a dozen targets).
    ax_latency.legend(handles=[Line2D([], [], color="0.3", linestyle="-", marker=".", label="p50 (colour: target)"),
                               Line2D([], [], color="0.3", linestyle="--", marker="x", label="p99")],
                      loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    ax_latency.set_xlabel("seconds since the first target started (targets ran one after another)" if sequential
                          else "seconds since start")
    names = ", ".join(r.target for r in results)
    fig.suptitle(title or (f"load test: {names}" if len(names) <= 90 else
                           f"load test: {len(results)} runs" + (", one after another" if sequential else "")))
    if footer:
        fig.text(0.01, 0.005, footer, fontsize="x-small", ha="left", va="bottom", wrap=True)
    path = Path(path)
    fig.savefig(path, format="png")
    return path


def _log_axis(ax: Axes, which: str) -> None:
    """A log scale a reader can read: major ticks at 1, 2 and 5 of each decade, labelled as plain numbers."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_yscale("log") if which == "y" else ax.set_xscale("log")
    axis = ax.yaxis if which == "y" else ax.xaxis
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:,.10g}"))
    axis.set_minor_formatter(NullFormatter())


def line_chart(path: Path, title: str, xlabel: str, ylabel: str, lines: Sequence[tuple[str, list[float], list[float]]],
               *, log_x: bool = False, step: bool = False) -> str:
    """One small chart of `lines` (label, xs, ys) into the PNG `path` (e.g. bench_cache's hit share per
    second and its lag CDF), the legend outside the axes so it never covers a line."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4.5), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for i, (label, xs, ys) in enumerate(lines):
        (ax.step if step else ax.plot)(xs, ys, color=f"C{i}", label=label)
    if log_x:
        _log_axis(ax, "x")
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    fig.suptitle(title)
    fig.savefig(path, format="png")
    return str(path)


# -- everything at once ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReportFiles:
    csv: Path
    timeseries_csv: Path
    markdown: Path
    png: Path | None


def write_report(
    results: Sequence[RunResult], out_dir: str | Path, *, basename: str = "loadtest", with_plot: bool | None = None
) -> ReportFiles:
    """Write <basename>.csv, <basename>-timeseries.csv, <basename>.md and <basename>.png into
    `out_dir` (created). `with_plot=None` plots only when matplotlib is installed; True requires it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = write_csv(results, out / f"{basename}.csv")
    series_path = out / f"{basename}-timeseries.csv"
    series_path.write_text(timeseries_csv(results), encoding="utf-8")
    md_path = out / f"{basename}.md"
    md_path.write_text(markdown_table(results), encoding="utf-8")
    png = None
    if with_plot or (with_plot is None and matplotlib_available()):
        png = plot(results, out / f"{basename}.png")
    return ReportFiles(csv=csv_path, timeseries_csv=series_path, markdown=md_path, png=png)


# -- sections of docs/benchmarks.md ------------------------------------------------------------------


def machine_line() -> str:
    """The machine in one line, for a report's header and a plot's footer."""
    m = machine()
    return (f"{m['nproc']} cores ({m['cpu_model']}), {m['mem_gib']} GiB, Linux {m['kernel']}, Python {m['python']}, "
            f"grpcio {m['grpcio']}")


def produced_by(module: str, command: str) -> list[str]:
    """The lines that open a bench's section: which script wrote it, and the command that ran."""
    return [f"Produced by `loadtest/{module}.py` (its docstring says exactly what runs) with", "", "```sh", command,
            "```", ""]


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
