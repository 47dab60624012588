"""Results on disk: one Parquet file per point, written atomically, checked on resume.

Layout of a results directory (docs/experiments.md):

    spec.toml                   the spec as given (TOML text)
    points/<point-id>.parquet   one finished point each

A point file is written to a temporary file in the same directory, flushed and fsync'ed, then
renamed over its final name with ``os.replace`` (atomic on POSIX), and the directory is fsync'ed:
a reader, or a resumed sweep after a crash or ``kill -9``, sees either the whole file or none.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .spec import Point, Spec, SpecError, canonical_json

RESULT_COLUMNS = ("set", "method", "schedulable", "gave_up", "switch_rate", "utilization")
SCHEMA = pa.schema(
    [
        ("point", pa.string()),
        ("m", pa.int64()),
        ("n", pa.int64()),
        ("util", pa.float64()),
        ("epsilon", pa.int64()),
        ("set", pa.int64()),
        ("method", pa.string()),
        ("schedulable", pa.bool_()),
        ("gave_up", pa.bool_()),
        ("switch_rate", pa.float64()),
        ("utilization", pa.float64()),
    ]
)
TMP_SUFFIX = ".tmp"


class EvaluatorError(SpecError):
    """The evaluator returned something that breaks the contract of docs/experiments.md."""


def points_dir(out_dir) -> Path:
    return Path(out_dir) / "points"


def point_path(out_dir, point: Point) -> Path:
    return points_dir(out_dir) / f"{point.id}.parquet"


def result_table(point: Point, result) -> pa.Table:
    """Check an evaluator result against the contract and turn it into the point's table."""
    where = f"evaluator result for point {point.id} ({point.label})"
    if not isinstance(result, dict):
        raise EvaluatorError(f"{where}: expected a dict of columns, got {type(result).__name__}")
    missing = [c for c in RESULT_COLUMNS if c not in result]
    if missing:
        raise EvaluatorError(f"{where}: missing column(s) {', '.join(missing)}")
    extra = [c for c in result if c not in RESULT_COLUMNS]
    if extra:
        raise EvaluatorError(f"{where}: unknown column(s) {', '.join(map(str, extra))}")
    rows = point.count * len(point.params["methods"])
    arrays = {}
    for col in RESULT_COLUMNS:
        typ = SCHEMA.field(col).type
        try:
            arr = pa.array(result[col], type=typ)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as e:
            raise EvaluatorError(f"{where}: column {col!r} is not of type {typ}: {e}") from None
        if len(arr) != rows:
            raise EvaluatorError(
                f"{where}: column {col!r} has {len(arr)} rows; expected count x methods = "
                f"{point.count} x {len(point.params['methods'])} = {rows}"
            )
        if col in ("set", "method", "gave_up", "utilization") and arr.null_count:
            raise EvaluatorError(f"{where}: column {col!r} has null values")
        arrays[col] = arr
    sets = arrays["set"].to_pylist()
    methods = arrays["method"].to_pylist()
    allowed = set(point.params["methods"])
    bad = {mt for mt in methods if mt not in allowed}
    if bad:
        raise EvaluatorError(f"{where}: method(s) {sorted(bad)} were not asked for")
    if any(s < 0 or s >= point.count for s in sets):
        raise EvaluatorError(f"{where}: 'set' must be in [0, {point.count})")
    if len(set(zip(sets, methods, strict=True))) != rows:
        raise EvaluatorError(f"{where}: some (set, method) pair is missing or repeated")
    c = point.coords
    head = {
        "point": pa.array([point.id] * rows, pa.string()),
        "m": pa.array([c["m"]] * rows, pa.int64()),
        "n": pa.array([c["n"]] * rows, pa.int64()),
        "util": pa.array([c["util"]] * rows, pa.float64()),
        "epsilon": pa.array([c["epsilon"]] * rows, pa.int64()),
    }
    return pa.Table.from_arrays([{**head, **arrays}[f.name] for f in SCHEMA], schema=SCHEMA)


def metadata(spec: Spec, point: Point, version: str) -> dict:
    return {
        "rtsched.spec": spec.text,
        "rtsched.spec_hash": spec.hash,
        "rtsched.quick": "true" if spec.quick else "false",
        "rtsched.point_id": point.id,
        "rtsched.point": point.json,
        "rtsched.coords": canonical_json(point.coords),
        "rtsched.seed": str(point.seed),
        "rtsched.version": version,
    }


def _fsync_dir(path: Path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def write_table_atomic(final: Path, table: pa.Table, meta: dict) -> Path:
    """Write ``table`` with schema metadata ``meta`` to ``final`` atomically (temporary file in
    the same directory, fsync, ``os.replace``, directory fsync)."""
    final = Path(final)
    tmp = final.with_name(f".{final.name}.{os.getpid()}{TMP_SUFFIX}")
    table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in meta.items()})
    try:
        with open(tmp, "wb") as f:
            pq.write_table(table, f, compression="zstd")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    _fsync_dir(final.parent)
    return final


def write_text_atomic(final: Path, text: str) -> Path:
    """Write a text file atomically (same protocol as the point files)."""
    final = Path(final)
    tmp = final.with_name(f".{final.name}.{os.getpid()}{TMP_SUFFIX}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    return final


def write_point(out_dir, spec: Spec, point: Point, table: pa.Table, version: str) -> Path:
    """Write the point's table atomically (temp file in the same dir, fsync, os.replace)."""
    return write_table_atomic(point_path(out_dir, point), table, metadata(spec, point, version))


def check_point(path: Path, spec: Spec, point: Point) -> str | None:
    """None if the file is a complete, matching result of ``point``; otherwise why it is not."""
    return load_point(path, spec, point)[1]


def load_point(path: Path, spec: Spec, point: Point):
    """(table, None) for a complete, matching result of ``point``; (None, why not) otherwise."""
    try:
        pf = pq.ParquetFile(path)
        meta = pf.schema_arrow.metadata or {}
        table = pf.read()
    except Exception as e:  # truncated, empty, not Parquet at all
        return None, f"unreadable ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
    got = {k.decode(errors="replace"): v.decode(errors="replace") for k, v in meta.items()}
    if got.get("rtsched.point_id") != point.id:
        return None, f"metadata names point {got.get('rtsched.point_id')!r}"
    if got.get("rtsched.point") != point.json:
        return None, "metadata holds different point parameters"
    if got.get("rtsched.spec_hash") != spec.hash:
        return None, "metadata names a different spec"
    if table.schema.remove_metadata() != SCHEMA:
        return None, "unexpected columns"
    rows = point.count * len(point.params["methods"])
    if table.num_rows != rows:
        return None, f"{table.num_rows} rows, expected {rows}"
    return table, None


def read_metadata(path: Path) -> dict:
    meta = pq.read_schema(path).metadata or {}
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in meta.items()}


def stored_spec_hashes(out_dir) -> dict:
    """spec hash -> number of point files carrying it (unreadable files are ignored here)."""
    out: dict = {}
    d = points_dir(out_dir)
    if not d.is_dir():
        return out
    for f in d.glob("*.parquet"):
        try:
            h = read_metadata(f).get("rtsched.spec_hash", "?")
        except Exception:
            continue
        out[h] = out.get(h, 0) + 1
    return out
