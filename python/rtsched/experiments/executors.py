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
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
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
    """Set the worker's Rust thread count; exit when the sweep process dies.

    A worker of a ProcessPoolExecutor whose parent was killed with SIGKILL would otherwise wait
    forever on its task queue (it holds both ends of the queue's pipe, so it never sees EOF).
    """
    import threading

    os.environ.setdefault("RAYON_NUM_THREADS", str(threads))
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="rtsched-parent-watch").start()


class LocalExecutor:
    def __init__(self, jobs: int | None = None):
        if jobs is not None and jobs < 1:
            raise SpecError(f"--jobs must be at least 1, got {jobs}")
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
        workers = min(self.jobs, len(items))
        threads = max(1, (os.cpu_count() or 1) // workers)
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(threads, os.getpid()),
        )
        try:
            pending = {pool.submit(fn, arg): key for key, arg in items}
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    key = pending.pop(fut)
                    try:
                        res = fut.result()
                    except Exception as e:
                        raise PointFailed(key, e) from e
                    yield key, res
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

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
