"""Executors: where sweep points are evaluated.

- ``LocalExecutor(jobs)``: worker processes on this machine (``concurrent.futures``, spawn start
  method); ``jobs=1`` evaluates in this process. Each worker's Rust thread pool gets
  ``cpu_count // workers`` threads (``RAYON_NUM_THREADS``) unless that variable is already set,
  so points x threads never oversubscribe the machine.
- ``DaskExecutor``: a dask.distributed cluster, given by scheduler address (``--dask
  tcp://host:port``), by an existing ``Client``, or started on Slurm through dask-jobqueue
  (``--slurm``). Dask is imported only here, only when asked for.

Every executor evaluates the same pure function of the point JSON, so results do not depend on
the executor, the number of workers or the completion order.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

from .errors import SpecError


class PointFailed(Exception):
    def __init__(self, key, error: BaseException):
        super().__init__(f"{key}: {type(error).__name__}: {error}")
        self.key, self.error = key, error


def _watch_parent(parent: int):
    import time

    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(1)


def _init_worker(threads: int, parent: int):
    """Set the worker's Rust thread count; ignore Ctrl-C; exit when the sweep process dies.

    A terminal's Ctrl-C reaches the whole process group. The workers ignore it: the parent
    alone decides (it keeps the finished points and terminates the workers). A worker that took
    the ``KeyboardInterrupt`` itself could die holding the lock of the pool's task queue, and
    the pool, then the interpreter's exit, would wait for it forever.

    A worker of a ProcessPoolExecutor whose parent was killed with SIGKILL would otherwise wait
    forever on its task queue (it holds both ends of the queue's pipe, so it never sees EOF).
    """
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.setdefault("RAYON_NUM_THREADS", str(threads))
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="rtsched-parent-watch").start()


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Ctrl-C ignored while the workers are stopped (a second Ctrl-C must not break the
    cleanup, nor print a traceback); the handler is restored after. Only in the main thread
    (signal handlers can only be set there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # pragma: no cover
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


#: Set once a pool was stopped early (Ctrl-C, an error): the process then leaves at once after
#: its last words (:func:`exit_after_stop`), because the interpreter's exit would wait for the
#: pool's manager thread, which a stopped pool can leave blocked.
_STOPPED = False


def stopped_a_pool() -> bool:
    """Whether a worker pool of this process was stopped early."""
    return _STOPPED


def exit_after_stop(code: int) -> None:
    """Ends the process with ``code`` now if a pool was stopped early (streams flushed first);
    otherwise returns. Python's exit joins every executor's manager thread with no timeout, and
    one whose workers were terminated mid-queue has been seen to block it for minutes."""
    if not _STOPPED:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # pragma: no cover - a closed stream
            pass
    os._exit(code)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stops the pool now: the workers are terminated (the points they were running are lost;
    every finished one was handed out), and the pool marks the points not run as failed.

    No future is cancelled here: Python 3.11's pool thread fails with ``InvalidStateError`` when
    it marks a cancelled future of a broken pool. The call queue's feeder thread may be blocked
    writing a large point to workers that are gone: the pool must not wait for it."""
    global _STOPPED
    _STOPPED = True
    with _sigint_ignored():
        procs = list((getattr(pool, "_processes", None) or {}).values())
        for proc in procs:
            try:
                proc.terminate()
            except (OSError, AttributeError):  # pragma: no cover - already gone
                pass
        queue = getattr(pool, "_call_queue", None)
        if queue is not None:
            queue.cancel_join_thread()
        pool.shutdown(wait=False)
        for proc in procs:
            proc.join(timeout=5)
            if proc.is_alive():  # pragma: no cover - a worker that ignores SIGTERM
                proc.kill()
                proc.join(timeout=5)


def max_local_jobs() -> int:
    """The most local worker processes: four per CPU (at least 32). Each is a Python process with
    the Rust core loaded; thousands of them exhaust memory long before they speed anything up."""
    return max(32, 4 * (os.cpu_count() or 1))


#: A Dask scheduler address: ``tcp://host:8786`` (or tls, ws, wss, ucx, inproc) or ``host:port``.
_ADDRESS = re.compile(r"^(?:(?:tcp|tls|ws|wss|ucx|inproc)://)?[A-Za-z0-9_.\-\[\]:%]+(?::\d{1,5})?/?$")


def check_address(address: Any) -> str:
    """A Dask scheduler address, checked before any connection is tried."""
    if (
        not isinstance(address, str)
        or not _ADDRESS.match(address.strip())
        or "://" not in address
        and ":" not in address
    ):
        shown = repr(address) if len(repr(address)) <= 60 else repr(address)[:57] + "..."
        raise SpecError(f"--dask {shown}: expected a Dask scheduler address like tcp://host:8786")
    return address.strip()


class LocalExecutor:
    def __init__(self, jobs: int | None = None):
        if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
            raise SpecError(f"--jobs must be at least 1 (an integer), got {jobs!r}")
        if jobs is not None and jobs > max_local_jobs():
            raise SpecError(
                f"--jobs {jobs}: at most {max_local_jobs()} local worker processes on this machine "
                f"({os.cpu_count() or 1} CPUs); for more, run on a cluster (--dask, --slurm)"
            )
        self.jobs = jobs or os.cpu_count() or 1

    def describe(self) -> str:
        return "in-process" if self.jobs == 1 else f"{self.jobs} local worker processes"

    def run(self, fn: Callable[[Any], Any], items: Iterable[tuple[Any, Any]]) -> Iterator[tuple[Any, Any]]:
        """Evaluate ``fn(arg)`` for (key, arg) items; yield (key, result) as each one completes."""
        items = list(items)
        if self.jobs == 1 or len(items) <= 1:
            for key, arg in items:
                try:
                    res = fn(arg)
                except Exception as e:
                    raise PointFailed(key, e) from e
                yield key, res
            return
        global _STOPPED
        _STOPPED = False  # this run's pool decides
        workers = min(self.jobs, len(items))
        threads = max(1, (os.cpu_count() or 1) // workers)
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(threads, os.getpid()),
        )
        pending: dict = {}
        finished = False
        try:
            pending = {pool.submit(fn, arg): key for key, arg in items}
            while pending:
                try:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                except KeyboardInterrupt:
                    # Ctrl-C: stop the workers now, then hand out the points that finished
                    # before it (the caller writes them), then let the interrupt through.
                    _stop(pool)
                    for fut in [f for f in pending if f.done() and not f.cancelled()]:
                        key = pending.pop(fut)
                        if fut.exception() is None:
                            yield key, fut.result()
                    raise
                for fut in done:
                    key = pending.pop(fut)
                    try:
                        res = fut.result()
                    except Exception as e:
                        raise PointFailed(key, e) from e
                    yield key, res
            finished = True
        finally:
            if finished:
                pool.shutdown(wait=True)
            else:  # an error, an interrupt, or a caller that stopped early: do not wait
                _stop(pool)

    def close(self) -> None:
        pass


def _parse_value(text: str):
    import json

    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def parse_options(opts: Iterable[str] | None) -> dict[str, Any]:
    """``["cores=8", "memory=16GB"]`` -> {"cores": 8, "memory": "16GB"} (ints, floats, booleans, JSON)."""
    out = {}
    for o in opts or []:
        if "=" not in o:
            raise SpecError(f"--slurm-opt {o!r}: expected KEY=VALUE, e.g. cores=8")
        k, v = o.split("=", 1)
        k = k.strip().replace("-", "_")
        if not k:
            raise SpecError(f"--slurm-opt {o!r}: empty key")
        out[k] = _parse_value(v.strip())
    return out


def _need(module: str, extra: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise SpecError(
            f"this executor needs the Python package {module.split('.')[0]!r}; "
            f"install it with pip install 'rtsched[{extra}]'"
        ) from None


class DaskExecutor:
    def __init__(self, address: str | None = None, client=None, slurm: dict | None = None, slurm_jobs: int = 1):
        distributed = _need("distributed", "cluster")
        self._cluster = None
        self._own_client = client is None
        if client is not None:
            self.client = client
            self._what = "the given Dask client"
        elif slurm is not None:
            jobqueue = _need("dask_jobqueue", "cluster")
            if slurm_jobs < 1:
                raise SpecError(f"--slurm-jobs must be at least 1, got {slurm_jobs}")
            try:
                self._cluster = jobqueue.SLURMCluster(**slurm)
            except TypeError as e:
                raise SpecError(f"--slurm-opt: dask_jobqueue.SLURMCluster rejected the options: {e}") from None
            self._cluster.scale(jobs=slurm_jobs)
            self.client = distributed.Client(self._cluster)
            self._what = f"Slurm via dask-jobqueue ({slurm_jobs} job(s))"
        elif address:
            try:
                self.client = distributed.Client(address, timeout="30s")
            except OSError as e:
                raise SpecError(f"--dask {address}: cannot connect to the Dask scheduler: {e}") from None
            self._what = f"the Dask scheduler at {address}"
        else:
            raise SpecError("DaskExecutor needs an address, a client or Slurm options")

    def describe(self) -> str:
        return self._what

    def run(self, fn: Callable[[Any], Any], items: Iterable[tuple[Any, Any]]) -> Iterator[tuple[Any, Any]]:
        from distributed import as_completed

        futures = {}
        for key, arg in items:
            fut = self.client.submit(fn, arg, key=f"rtsched-point-{key}", pure=False)
            futures[fut] = key
        try:
            for fut in as_completed(list(futures)):
                key = futures[fut]
                try:
                    res = fut.result()
                except Exception as e:
                    raise PointFailed(key, e) from e
                fut.release()
                yield key, res
        finally:
            for fut in futures:
                if not fut.done():
                    fut.cancel()

    def close(self) -> None:
        if self._own_client:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()
