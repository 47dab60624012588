"""The one runner of experiments: fan points out to an executor, write each finished point
atomically, resume.

Every experiment kind goes through :func:`run_sweep`: schedulability sweeps (``spec.Spec``) and
the simulation reproductions (``repro._sim.SimSpec``). A spec gives its points and its result
contract (``schema``, ``expected_rows(point)``, ``result_table(point, result)``,
``default_evaluator()``); everything else (the results directory, refusing another spec's
results, progress, the atomic Parquet files with spec, seed and version, resume) is here, once.

Resume semantics (docs/experiments.md): a point whose file exists and is valid (readable
Parquet, metadata naming this spec and this point, the expected columns and rows) is kept; a
corrupt or partial file is reported and recomputed; temporary files of an interrupted write are
removed. The parent process writes the files as results arrive, so a run killed at any moment
(Ctrl-C, ``kill -9``) loses at most the points in flight, never a written one.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..output import write_text
from . import store
from .errors import SpecError
from .executors import LocalExecutor, PointFailed
from .progress import Progress
from .spec import load_spec

__all__ = ["SweepResult", "load_tables", "run_sweep", "version"]


@dataclass
class SweepResult:
    out_dir: Path
    total: int
    computed: list = field(default_factory=list)  # point ids evaluated in this run
    kept: list = field(default_factory=list)  # point ids found valid on disk and not recomputed
    invalid: list = field(default_factory=list)  # (point id, reason) found on disk and recomputed
    seconds: float = 0.0  # wall time of the run


def version() -> str:
    """The rtsched version recorded in every point file."""
    try:
        from .. import __version__

        return str(__version__)
    except Exception:  # pragma: no cover
        return "unknown"


def _write_spec(out: Path, spec) -> None:
    write_text(out / "spec.toml", spec.text)
    info = {
        "name": spec.name,
        "kind": spec.kind,
        "quick": spec.quick,
        "spec_hash": spec.hash,
        "points": len(spec.points),
        "variant": getattr(spec, "variant", None),
    }
    write_text(out / "sweep.json", json.dumps(info, indent=1) + "\n")


def run_sweep(
    spec: Any,
    out_dir: str | os.PathLike,
    *,
    resume: bool = False,
    evaluator: Callable[[str], dict] | None = None,
    executor: Any = None,
    jobs: int | None = None,
    progress: bool = True,
    log: Any = None,
    quick: bool = False,
    variant: str | None = None,
) -> SweepResult:
    """Run (or resume) the points of an experiment spec; returns what was computed, kept and
    found invalid.

    ``spec`` is a spec object (a sweep's ``Spec`` or a simulation reproduction's ``SimSpec``) or
    the path of a sweep spec; ``evaluator`` defaults to the spec's (for sweeps
    ``rtsched._core.evaluate_point``) and must be a module-level function when the executor runs
    it in other processes.
    """
    log = log if log is not None else sys.stderr
    if isinstance(spec, (str, os.PathLike)):
        spec = load_spec(spec, quick=quick, variant=variant)
    if evaluator is None:
        evaluator = spec.default_evaluator()
    out = Path(out_dir)
    pdir = store.points_dir(out)
    if out.exists() and not out.is_dir():
        raise SpecError(f"--out {str(out)!r} exists and is not a directory")

    others = {h: c for h, c in store.stored_spec_hashes(out).items() if h != spec.hash}
    if others:
        count = sum(others.values())
        raise SpecError(
            f"{str(out)!r} holds {count} point(s) of a different spec (spec hash "
            f"{', '.join(sorted(others))}; this spec is {spec.hash}); choose another --out "
            "directory or delete that one"
        )
    pdir.mkdir(parents=True, exist_ok=True)
    for tmp in list(pdir.glob(f".*{store.TMP_SUFFIX}")) + list(out.glob(f".*{store.TMP_SUFFIX}")):
        print(f"removing {tmp.name}: left by an interrupted write", file=log)
        tmp.unlink(missing_ok=True)
    _write_spec(out, spec)

    result = SweepResult(out, len(spec.points))
    todo = []
    existing = 0
    for p in spec.points:
        path = store.point_path(out, p)
        if not path.exists():
            todo.append(p)
            continue
        existing += 1
        if not resume:
            todo.append(p)
            continue
        why = store.check_point(path, spec, p)
        if why is None:
            result.kept.append(p.id)
        else:
            print(f"point {p.id} ({p.label}): invalid file ({why}); recomputing", file=log)
            result.invalid.append((p.id, why))
            todo.append(p)
    if existing and not resume:
        print(
            f"{existing} point(s) of this spec already in {out}: recomputing them (use --resume to keep them)", file=log
        )
    if spec.skipped:
        print(
            f"{len(spec.skipped)} grid point(s) skipped as infeasible, e.g. "
            f"{spec.skipped[0][1]} (m={spec.skipped[0][0]['m']}, n={spec.skipped[0][0]['n']})",
            file=log,
        )

    if executor is None:
        executor = LocalExecutor(jobs)
    by_id = {p.id: p for p in todo}
    kept_sets = sum(p.count for p in spec.points if p.id not in by_id)
    prog = Progress(
        len(spec.points),
        spec.total_sets,
        done_points=len(spec.points) - len(todo),
        done_sets=kept_sets,
        stream=log,
        label=spec.name,
        enabled=progress,
    )
    if progress:
        print(
            f"{spec.name}: {len(spec.points)} points, {spec.total_sets:,} task sets; {len(result.kept)} kept, "
            f"{len(todo)} to compute on {executor.describe()}; results in {out}",
            file=log,
        )
    ver = version()
    t0 = time.monotonic()
    try:
        for key, res in executor.run(evaluator, [(p.id, p.json) for p in todo]):
            p = by_id[key]
            table = spec.result_table(p, res)
            store.write_point(out, spec, p, table, ver)
            result.computed.append(p.id)
            prog.update(1, p.count)
    except PointFailed as e:
        p = by_id.get(e.key)
        what = f"point {e.key} ({p.label})" if p else f"point {e.key}"
        if isinstance(e.error, SpecError):
            raise SpecError(f"{what}: {e.error}") from e.error
        raise SpecError(f"{what}: the evaluator failed: {type(e.error).__name__}: {e.error}") from e.error
    finally:
        prog.close()
        result.seconds = time.monotonic() - t0
    return result


def load_tables(spec: Any, out_dir: str | os.PathLike) -> list:
    """The tables of every point of ``spec`` in ``out_dir``, in grid order (after a run; a point
    without a valid file is an error naming it)."""
    tables = []
    for p in spec.points:
        table, why = store.load_point(store.point_path(out_dir, p), spec, p)
        if table is None:
            raise SpecError(f"point {p.id} ({p.label}) in {str(out_dir)!r}: {why}")
        tables.append(table)
    return tables
