"""The one output writer: every result file that ``rtsched`` writes (``simulate``, ``run``,
``measure-overheads``, ``quickstart``, task-set files, sweeps, plots and reproductions) goes
through here.

A file is written to a temporary file in the target folder (``.NAME.PID.tmp``), flushed and
fsync'ed, renamed over its final name with ``os.replace`` (atomic on POSIX), and the folder is
fsync'ed. A reader, or a rerun after a crash or ``kill -9``, therefore sees the whole file or none
(or the previous version), never a partial one. The path is used exactly as given: nothing is
written outside the folder the caller chose. An error (a missing folder, no permission, a full
disk) raises :class:`rtsched.RtschedError` naming the path; the temporary file is removed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ._core import RtschedError

#: Suffix of temporary files; a folder's ``.*.tmp`` files are leftovers of interrupted writes.
TMP_SUFFIX = ".tmp"


def temp_path(final: Path) -> Path:
    """The temporary file a write of ``final`` goes through (same folder, hidden name)."""
    return final.with_name(f".{final.name}.{os.getpid()}{TMP_SUFFIX}")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory file descriptors
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def write_with(path: str | os.PathLike, write: Callable[[IO[bytes]], Any]) -> Path:
    """Writes ``path`` atomically: ``write(f)`` fills the binary file object ``f``."""
    final = Path(os.fspath(path))
    tmp = temp_path(final)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except BaseException as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        if isinstance(e, OSError):
            raise RtschedError(f"cannot write {str(final)!r}: {e.strerror or e}") from None
        raise
    _fsync_dir(final.parent)
    return final


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Writes ``data`` to ``path`` atomically."""
    return write_with(path, lambda f: f.write(data))


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Writes ``text`` (UTF-8) to ``path`` atomically."""
    return write_bytes(path, text.encode("utf-8"))


def write_data(path: str | os.PathLike, data: str | bytes) -> Path:
    """Writes text or bytes to ``path`` atomically (the exporters return either)."""
    return write_bytes(path, data if isinstance(data, bytes) else data.encode("utf-8"))


def save_figure(fig: Any, path: str | os.PathLike, **savefig_kw: Any) -> Path:
    """Saves a matplotlib figure to ``path`` atomically; the format is the path's suffix."""
    fmt = Path(os.fspath(path)).suffix.lstrip(".").lower() or None
    return write_with(path, lambda f: fig.savefig(f, format=fmt, **savefig_kw))
