"""Running a sweep: fan points out to an executor, write each finished point atomically, resume.

Resume semantics (docs/experiments.md): a point whose file exists and is valid (readable
Parquet, metadata naming this spec and this point, the expected rows) is kept; a corrupt or
partial file is reported and recomputed; temporary files of an interrupted write are removed. The
parent process writes the files as results arrive, so a sweep killed at any moment (Ctrl-C,
``kill -9``) loses at most the points in flight, never a written one.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import store
from .executors import LocalExecutor, PointFailed
from .progress import Progress
from .spec import Spec, SpecError, load_spec


@dataclass
class SweepResult:
    out_dir: Path
    total: int
    computed: list = field(default_factory=list)  # point ids evaluated in this run
    kept: list = field(default_factory=list)  # point ids found valid on disk and not recomputed
    invalid: list = field(default_factory=list)  # (point id, reason) found on disk and recomputed


def _version() -> str:
    try:
        from .. import __version__

        return str(__version__)
    except Exception:  # pragma: no cover
        return "unknown"


def _write_spec(out: Path, spec: Spec):
    final = out / "spec.toml"
    tmp = out / f".spec.toml.{os.getpid()}{store.TMP_SUFFIX}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(spec.text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, final)
    info = {"name": spec.name, "quick": spec.quick, "spec_hash": spec.hash, "points": len(spec.points)}
    tmp = out / f".sweep.json.{os.getpid()}{store.TMP_SUFFIX}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(info, indent=1) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, out / "sweep.json")


def run_sweep(
    spec,
    out_dir,
    *,
    resume: bool = False,
    evaluator=None,
    executor=None,
    jobs: int | None = None,
    progress: bool = True,
    log=None,
    quick: bool = False,
) -> SweepResult:
    """Run (or resume) a sweep; returns what was computed, kept and found invalid.

    ``spec`` is a Spec or a path; ``evaluator`` defaults to ``rtsched._core.evaluate_point`` and
    must be a module-level function when the executor runs it in other processes.
    """
    log = log if log is not None else sys.stderr
    if not isinstance(spec, Spec):
        spec = load_spec(spec, quick=quick)
    if evaluator is None:
        from .evaluate import core_evaluator, evaluate_point

        core_evaluator()  # fail here, with a clear message, not in every worker
        evaluator = evaluate_point
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
    version = _version()
    try:
        for key, res in executor.run(evaluator, [(p.id, p.json) for p in todo]):
            p = by_id[key]
            table = store.result_table(p, res)
            store.write_point(out, spec, p, table, version)
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
    return result
