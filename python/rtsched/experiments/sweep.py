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

import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
    stray: list = field(default_factory=list)  # names of files in points/ that are no point of the spec
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


#: The lock file of a results folder: the pid and host of the run that owns it.
LOCK = ".lock"
#: The marker of a results folder: a folder that holds other files and not this one is the
#: user's, and a sweep refuses to write there (it would overwrite their spec.toml).
MARKER = ".rtsched-results"
MARKER_TEXT = "an rtsched results folder (rtsched sweep / reproduce); docs/experiments.md\n"


def _legacy_results(out: Path) -> bool:
    """A results folder written before the marker existed: its sweep.json names a spec hash."""
    try:
        info = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(info, dict) and isinstance(info.get("spec_hash"), str)


def check_out_dir(out: Path) -> None:
    """Refuses a results folder that is not ours to write: the root folder, the home folder, a
    file, or a folder that holds other files and is not a results folder (no marker). A new or
    empty folder, or one a sweep wrote before, is fine."""
    try:
        real = out.resolve()
    except (OSError, RuntimeError) as e:
        raise SpecError(f"--out {str(out)!r}: cannot resolve the path ({e})") from None
    if real == Path(real.anchor):
        raise SpecError(f"--out {str(out)!r} is the root folder; choose a folder of its own for the results")
    try:
        home = Path.home().resolve()
    except (OSError, RuntimeError, KeyError):
        home = None
    if real == home:
        raise SpecError(f"--out {str(out)!r} is your home folder; choose a folder of its own for the results")
    if not out.exists():
        return
    if not out.is_dir():
        raise SpecError(f"--out {str(out)!r} exists and is not a directory")
    try:
        entries = sorted(e.name for e in out.iterdir())
    except OSError as e:
        raise SpecError(f"--out {str(out)!r}: cannot list the folder: {e.strerror or e}") from None
    if not entries or (out / MARKER).is_file() or _legacy_results(out):
        return
    if set(entries) <= {LOCK}:  # a run killed before it wrote its marker
        return
    shown = ", ".join(repr(e) for e in entries[:3]) + (", ..." if len(entries) > 3 else "")
    raise SpecError(
        f"--out {str(out)!r} is not empty and not an rtsched results folder (it holds {shown}); "
        "the results would overwrite its files: choose a new or empty folder"
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True


def _owner(text: str) -> tuple[int | None, str]:
    owner = text.split()
    pid = int(owner[0]) if owner and owner[0].isdigit() and len(owner[0]) < 12 else None
    return pid, owner[1] if len(owner) > 1 else "?"


def _in_use(out: Path, path: Path, pid: int | None, host: str) -> SpecError:
    return SpecError(
        f"{str(out)!r} is in use by another run (process {pid if pid is not None else '?'} on {host}, "
        f"see {str(path)!r}); wait for it to finish, or delete that file if the process is gone"
    )


@contextmanager
def lock(out: Path, log: Any = None) -> Iterator[None]:
    """Holds ``out/.lock`` for a run: two runs cannot write one results folder at once.

    The lock is an exclusive ``flock`` on that file, which the kernel releases when its owner
    ends (even by ``kill -9``), so there is no stale lock to take over and no race between two
    runs that both find one: exactly one gets the ``flock``. After locking, the file must still be
    the one at ``out/.lock`` (a releasing owner unlinks it), else the attempt is repeated. The file
    holds the owner's pid and host, for the message that names it. A file naming a live process
    of this host that holds no ``flock`` (an older rtsched) is refused too; one naming a process
    that is gone is taken over, with a note."""
    path = out / LOCK
    me = f"{os.getpid()} {socket.gethostname()}"
    for _ in range(20):
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                text = os.read(fd, 200).decode("utf-8", "replace")
            finally:
                os.close(fd)
            raise _in_use(out, path, *_owner(text)) from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if not same:  # unlinked by the owner that released it: lock the file now at the path
            os.close(fd)
            continue
        break
    else:  # pragma: no cover - a lock file that keeps being replaced
        raise SpecError(f"cannot take the lock {str(path)!r}")
    try:
        text = os.read(fd, 200).decode("utf-8", "replace")
        pid, host = _owner(text)
        if pid is not None and pid != os.getpid() and host == socket.gethostname():
            if _alive(pid):
                raise _in_use(out, path, pid, host)
            print(f"{path}: taking over the lock of process {pid}, which is gone", file=log or sys.stderr)
        os.ftruncate(fd, 0)
        os.pwrite(fd, (me + "\n").encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    try:
        yield
    finally:
        try:
            path.unlink()  # while still holding the flock: a run that opened it re-checks the path
        except OSError:
            pass
        os.close(fd)


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
    check_out_dir(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SpecError(f"cannot create the results folder {str(out)!r}: {e.strerror or e}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise SpecError(f"the results folder {str(out)!r} is not writable; choose another --out")
    try:
        with lock(out, log):
            write_text(out / MARKER, MARKER_TEXT)
            return _run_locked(spec, out, pdir, resume, evaluator, executor, jobs, progress, log)
    except OSError as e:  # no permission, a full disk, a folder removed under the run
        where = f" ({e.filename})" if getattr(e, "filename", None) else ""
        raise SpecError(f"results folder {str(out)!r}: {e.strerror or e}{where}") from None


def _run_locked(spec, out, pdir, resume, evaluator, executor, jobs, progress, log) -> SweepResult:
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
    result.stray = store.stray_files(out, [p.id for p in spec.points])
    if result.stray:
        shown = ", ".join(result.stray[:5]) + (", ..." if len(result.stray) > 5 else "")
        print(
            f"{len(result.stray)} stray file(s) in {pdir} that are no point of this spec: {shown}; the Parquet "
            "loader (docs/experiments.md) reads every file there: move them away",
            file=log,
        )
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
    results = executor.run(evaluator, [(p.id, p.json) for p in todo])
    try:
        for key, res in results:
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
        close = getattr(results, "close", None)
        if close is not None:  # stop the executor's workers now, not when the generator is collected
            close()
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
