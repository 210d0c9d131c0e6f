"""Convert an archive of coding-agent sessions into a Parquet dataset of the events table, with
Apache Spark, using the agentlog Python package on the workers.

    spark-submit examples/spark_convert.py ~/archive/sessions --output s3a://bucket/agentlog/events

The driver lists the units of work with ``agentlog.groups``: files that share reader state (a
Claude Code project directory) stay in one unit, so every unit can be read on its own. Each
Spark task reads its units with ``agentlog.read`` inside ``mapInArrow``, and the events reach
Spark as Arrow record batches. The dataset holds the same rows, with the same ids, as
``agentlog convert INPUT -o events.parquet`` on one machine; only the row order differs.

The workers need the ``agentlog`` package (``pip install agentlog`` in their environment, or
a packed virtual environment with ``--archives``) and must see the input paths as the driver
does (a shared file system, or paths under a mounted object store).
"""

from __future__ import annotations

import argparse
from typing import Iterator, List, Optional

import agentlog
import pyarrow as pa


def convert(
    spark, inputs: List[str], output: str, from_: str = "auto", partitions: Optional[int] = None,
    partition_by: Optional[List[str]] = None,
) -> int:
    """Writes the events of ``inputs`` to the Parquet dataset ``output``; gives the number of
    units of work."""
    from pyspark.sql.pandas.types import from_arrow_schema

    def read_units(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        # Runs on the workers (defined here so that Spark ships it by value): the events of
        # every unit in `batches` (a `files` column of path lists), read on this task's thread,
        # since Spark runs one task per core already.
        import agentlog

        for batch in batches:
            for files in batch.column("files").to_pylist():
                yield from agentlog.read(files, from_=from_, jobs=1)

    units = agentlog.groups(inputs, from_=from_)
    if not units:
        raise SystemExit(f"no session files found in {', '.join(inputs)}")
    # Big units first, so that the last tasks to start are short ones.
    ordered = sorted(enumerate(units), key=lambda u: -len(u[1]))
    work = spark.createDataFrame(ordered, "unit int, files array<string>")
    work = work.repartition(partitions or min(len(units), spark.sparkContext.defaultParallelism * 4), "unit")
    events = work.mapInArrow(read_units, from_arrow_schema(agentlog.schema("events")))
    writer = events.write.mode("overwrite")
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.parquet(output)
    return len(units)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", help="files, directories or glob patterns, as agentlog convert takes")
    parser.add_argument("--output", required=True, help="the Parquet dataset to write (replaced if it exists)")
    parser.add_argument("--from", dest="from_", default="auto", help="the input format, as agentlog convert --from")
    parser.add_argument("--partitions", type=int, help="Spark partitions of the work (default: 4 per core)")
    parser.add_argument("--partition-by", nargs="*", help="columns to partition the dataset by, such as agent")
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.appName("agentlog convert")
        # Instants as Parquet's TIMESTAMP_MICROS (UTC), as agentlog writes them, not INT96.
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .getOrCreate()
    )
    units = convert(spark, args.inputs, args.output, args.from_, args.partitions, args.partition_by)
    print(f"agentlog: {units} units of work converted into {args.output}")
    spark.stop()


if __name__ == "__main__":
    main()
