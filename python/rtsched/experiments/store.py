"""Results on disk: one Parquet file per point, written atomically, checked on resume.

Layout of a results directory (docs/experiments.md):

    spec.toml                   the spec as given (TOML text)
    sweep.json                  {"name", "kind", "quick", "spec_hash", "points", "variant"}
    points/<point-id>.parquet   one finished point each

The same layout serves every experiment kind (schedulability sweeps and the simulation
reproductions); the columns of a point file are the spec's ``schema``. A point file is written
through the one output writer (``rtsched.output``: a temporary file in the same directory,
fsync, ``os.replace``, directory fsync): a reader, or a resumed run after a crash or ``kill -9``,
sees either the whole file or none.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..output import TMP_SUFFIX, write_with
from .fields import canonical_json
from .names import path_name
from .point import Point

__all__ = [
    "TMP_SUFFIX",
    "CHECKSUM",
    "check_point",
    "checksum",
    "load_point",
    "metadata",
    "point_path",
    "points_dir",
    "read_metadata",
    "stray_files",
    "stored_spec_hashes",
    "write_point",
    "write_table",
]


def points_dir(out_dir: str | os.PathLike) -> Path:
    return Path(out_dir) / "points"


def point_path(out_dir: str | os.PathLike, point: Point) -> Path:
    return points_dir(out_dir) / f"{path_name(point.id, 'point id')}.parquet"


def metadata(spec: Any, point: Point, version: str) -> dict:
    """What every point file carries: the spec, its hash, the point, its seed, the version."""
    return {
        "rtsched.spec": spec.text,
        "rtsched.spec_hash": spec.hash,
        "rtsched.kind": spec.kind,
        "rtsched.quick": "true" if spec.quick else "false",
        "rtsched.point_id": point.id,
        "rtsched.point": point.json,
        "rtsched.coords": canonical_json(point.coords),
        "rtsched.seed": str(point.seed),
        "rtsched.version": version,
    }


#: The metadata key of a point file's checksum (:func:`checksum`).
CHECKSUM = "rtsched.checksum"


def checksum(table: pa.Table, meta: dict) -> str:
    """SHA-256 over the table's values (as Python values, column by column) and the metadata
    (without this key): a bit flipped anywhere in what a reader gets changes it. Recomputed from
    the file on resume (:func:`load_point`)."""
    h = hashlib.sha256()
    body = {k: v for k, v in meta.items() if k != CHECKSUM}
    h.update(json.dumps(body, sort_keys=True, ensure_ascii=True).encode())
    for name in table.column_names:
        h.update(b"\0" + name.encode() + b"\0")
        h.update(json.dumps(table.column(name).to_pylist(), ensure_ascii=True).encode())
    return "sha256:" + h.hexdigest()


def write_table(final: Path, table: pa.Table, meta: dict) -> Path:
    """Write ``table`` with schema metadata ``meta`` (and its :func:`checksum`) to ``final``
    atomically (zstd Parquet)."""
    meta = {**meta, CHECKSUM: checksum(table, meta)}
    table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in meta.items()})
    return write_with(final, lambda f: pq.write_table(table, f, compression="zstd"))


def write_point(out_dir: str | os.PathLike, spec: Any, point: Point, table: pa.Table, version: str) -> Path:
    """Write the point's table atomically with the metadata of :func:`metadata`."""
    return write_table(point_path(out_dir, point), table, metadata(spec, point, version))


def check_point(path: Path, spec: Any, point: Point) -> str | None:
    """None if the file is a complete, matching result of ``point``; otherwise why it is not."""
    return load_point(path, spec, point)[1]


def load_point(path: Path, spec: Any, point: Point) -> tuple[Any, str | None]:
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
    if table.schema.remove_metadata() != spec.schema:
        return None, "unexpected columns"
    rows = spec.expected_rows(point)
    if table.num_rows != rows:
        return None, f"{table.num_rows} rows, expected {rows}"
    # A file written before checksums existed has none: its values are taken as they are.
    if CHECKSUM in got and got[CHECKSUM] != checksum(table, got):
        return None, "checksum mismatch (the file was changed or damaged after it was written)"
    return table, None


def stray_files(out_dir: str | os.PathLike, ids: Iterable[str]) -> list[str]:
    """The names of files in ``points/`` that are no point of the spec (``ids``) and no
    temporary file: the documented loader (``pd.read_parquet(OUT / "points")``) would read
    them too."""
    d = points_dir(out_dir)
    if not d.is_dir():
        return []
    want = {f"{i}.parquet" for i in ids}

    def temporary(name: str) -> bool:
        return name.startswith(".") and name.endswith(TMP_SUFFIX)

    return sorted(f.name for f in d.iterdir() if f.name not in want and not temporary(f.name))


def read_metadata(path: Path) -> dict:
    meta = pq.read_schema(path).metadata or {}
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in meta.items()}


def stored_spec_hashes(out_dir: str | os.PathLike) -> dict:
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
