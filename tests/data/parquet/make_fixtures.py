"""Writes the Parquet fixtures of tests/io/test_parquet.cpp with pyarrow (build/venv), each next to the
CSV file that holds the same table, so that the test can require read_parquet to give read_csv's table.
Run: build/venv/bin/python tests/data/parquet/make_fixtures.py"""
import datetime
import pathlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = pathlib.Path(__file__).resolve().parent


def cell(v):
    """A value as read_csv's equivalent cell: floats in their shortest text, bools 1/0, None empty."""
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (float, np.floating)):
        return repr(float(np.float32(v))) if not np.isnan(v) else ""
    return str(v)


def mixed():
    # 10 rows in row groups of 4 (3 groups): every numeric type, nulls, plain and dictionary strings,
    # a string column of nulls only (numeric NaN, as an empty CSV column is).
    cols = {
        "f32": pa.array([0.5, None, -1.25, 3.0e-8, 7.0, None, 1.0e20, -0.0, 2.5, 0.1], pa.float32()),
        "f64": pa.array([float(np.float32(v)) for v in (1.1, 2.2, -3.3, 4.4, 5.5, 6.6, 7.7, 8.8, 9.9, 0.3)],
                        pa.float64()),
        "i64": pa.array([1, -2, 3, None, 16777217, 6, 7, -8, 9, 123456789], pa.int64()),
        "i8": pa.array([1, 2, 3, 4, 5, 6, 7, 8, 9, -128], pa.int8()),
        "u32": pa.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 4294967295], pa.uint32()),
        "flag": pa.array([True, False, None, True, True, False, False, True, False, True], pa.bool_()),
        "name": pa.array(["alice", "bob", None, "carol", "dave", "", "eve", "frank", "grace", "Ünïcode"],
                         pa.string()),
        "color": pa.array(["red", "green", "red", "blue", None, "green", "red", "blue", "blue", "red"],
                          pa.string()).dictionary_encode(),
        "nothing": pa.array([None] * 10, pa.string()),
        "y": pa.array([0.25, 1.5, 2.75, 4.0, 5.25, 6.5, 7.75, 9.0, 10.25, 11.5], pa.float32()),
    }
    table = pa.table(cols)
    pq.write_table(table, HERE / "mixed.parquet", row_group_size=4, compression="snappy")
    names = list(cols)
    with open(HERE / "mixed.csv", "w") as f:
        f.write(",".join(names) + "\n")
        for r in range(table.num_rows):
            f.write(",".join(cell(table.column(n)[r].as_py()) for n in names) + "\n")


def refused():
    n = 3
    pq.write_table(pa.table({"x": [1.0, 2.0, 3.0], "tags": pa.array([[1, 2], [3], []], pa.list_(pa.int64()))}),
                   HERE / "list.parquet")
    pq.write_table(pa.table({"x": [1.0, 2.0, 3.0],
                             "point": pa.array([{"a": 1, "b": 2.0}] * n, pa.struct([("a", pa.int64()),
                                                                                     ("b", pa.float64())]))}),
                   HERE / "struct.parquet")
    t0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    pq.write_table(pa.table({"x": [1.0, 2.0, 3.0], "when": pa.array([t0] * n, pa.timestamp("us", tz="UTC"))}),
                   HERE / "timestamp_tz.parquet")
    pq.write_table(pa.table({"x": pa.array([], pa.float64())}), HERE / "no_rows.parquet")


if __name__ == "__main__":
    mixed()
    refused()
