"""The pipeline's command line refuses bad arguments as bad arguments (exit status 2, argparse's),
before a Spark session starts: the docstring of pipeline/__main__.py promises 2 for them."""

from __future__ import annotations

import pytest

from pipeline.__main__ import build_parser


@pytest.mark.parametrize(("argv", "complaint"), [
    (["write", "db", "t", "in.parquet", "--partition", "ds"], "takes KEY=VALUE, got 'ds'"),
    (["write", "db", "t", "in.parquet", "--partition", "=x"], "takes KEY=VALUE, got '=x'"),
    (["read", "db", "t", "--limit", "-1"], "must be 0 (all) or positive, got -1"),
    (["read", "db", "t", "--limit", "ten"], "must be a whole number, got 'ten'"),
    (["--log-level", "verbose", "read", "db", "t"], "invalid choice: 'VERBOSE'"),
])
def test_bad_arguments_exit_2_naming_the_argument(argv: list[str], complaint: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(argv)
    assert exit_.value.code == 2 and complaint in capsys.readouterr().err


def test_a_log_level_is_taken_in_any_case() -> None:
    assert build_parser().parse_args(["--log-level", "info", "read", "db", "t"]).log_level == "INFO"


def test_static_partitions_parse_in_order() -> None:
    args = build_parser().parse_args(["write", "db", "t", "in.parquet", "--partition", "ds=2024-01-01",
                                      "--partition", "hr=a=b"])
    assert dict(args.partition) == {"ds": "2024-01-01", "hr": "a=b"}
