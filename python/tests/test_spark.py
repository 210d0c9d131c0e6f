"""The Spark recipe (`examples/spark_convert.py`) gives the command's events, in local mode."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import ROOT, run_cli
from test_read import plain

sys.path.insert(0, str(ROOT / "examples"))


@pytest.fixture(scope="module")
def spark():
    if os.environ.get("CI") != "true":
        pytest.importorskip("pyspark")
        if not shutil.which("java"):
            pytest.skip("no Java")
    from pyspark.sql import SparkSession

    # The workers run this interpreter, which has the package, not the first python3 on PATH.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("agentlog test")
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    yield session
    session.stop()


def test_spark_conversion_equals_the_command_on_the_shared_corpus(spark, shared_corpus: Path, tmp_path: Path) -> None:
    import spark_convert

    units = spark_convert.convert(spark, [str(shared_corpus)], str(tmp_path / "events"), partitions=4)
    assert units > 5
    assert run_cli("convert", "-q", str(shared_corpus), "-o", str(tmp_path / "cli.parquet")).returncode == 0
    expected = plain(pq.read_table(tmp_path / "cli.parquet")).sort_by("id")
    got = pq.read_table(tmp_path / "events").select(expected.column_names).sort_by("id")
    assert got.num_rows == expected.num_rows > 10_000
    assert got.column("id").to_pylist() == expected.column("id").to_pylist()
    assert got.cast(expected.schema).equals(expected)
