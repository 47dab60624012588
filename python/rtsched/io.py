"""Reading and writing task-set files (formats: docs/formats.md).

``.json`` holds one task set, ``.jsonl`` one per line, ``.csv`` one task per row; rt-app
configurations (``format="rt-app"``) are read through :mod:`rtsched.rtapp`. Files are read as
UTF-8 (a leading byte-order mark is skipped); a binary or non-UTF-8 file is one
:class:`rtsched.RtschedError` naming the file, as is every other problem.

:func:`load` reads a file that holds one task set and returns it; :func:`load_many` reads a
batch (any format) and returns a list.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from . import validate as v
from ._core import RtschedError, TaskSet, parse_jsonl
from .output import write_text

#: The task-set formats, by the name ``format=`` and ``--format`` take.
FORMATS = ("json", "jsonl", "csv", "rt-app")


def _format(path: str | os.PathLike, fmt: str | None = None) -> str:
    if fmt is not None:
        if fmt not in FORMATS:
            raise RtschedError(f"unknown task-set format {fmt!r} (use {', '.join(FORMATS)})")
        return fmt
    lower = os.fspath(path).lower()
    if lower.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if lower.endswith(".json"):
        return "json"
    if lower.endswith(".csv"):
        return "csv"
    raise RtschedError(f"cannot tell the format of {os.fspath(path)!r}: use a .json, .jsonl or .csv extension")


def read_text(path: str | os.PathLike, what: str = "file") -> str:
    """The text of a file we read (task sets, placements, overhead models, specs).

    Errors are one line naming the file: it cannot be opened, it is a directory, it holds NUL
    bytes (a binary file) or bytes that are not UTF-8.
    """
    path = v.path(path, what)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except IsADirectoryError:
        raise RtschedError(f"cannot read {path!r}: it is a directory") from None
    except OSError as e:
        raise RtschedError(f"cannot read {path!r}: {e.strerror or e}") from None
    nul = data.find(b"\0", 0, 1 << 16)
    if nul >= 0:
        raise RtschedError(f"{path}: not a text file (a NUL byte at offset {nul}); is it a binary file?")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RtschedError(
            f"{path}: not UTF-8 text (invalid byte 0x{data[e.start]:02x} at offset {e.start}); save the file as UTF-8"
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


def loads_many(text: str, fmt: str) -> list[TaskSet]:
    """Parses ``text`` in format ``fmt`` (``json``, ``jsonl``, ``csv`` or ``rt-app``) into a list
    of task sets (one element except for ``jsonl``)."""
    text = v.text(text, "text")
    fmt = v.text(fmt, "fmt")
    if fmt == "json":
        return [TaskSet.from_json(text)]
    if fmt == "jsonl":
        return list(parse_jsonl(text))
    if fmt == "csv":
        return [TaskSet.from_csv(text)]
    if fmt == "rt-app":
        from .rtapp import from_rtapp

        return [from_rtapp(text)]
    raise RtschedError(f"unknown task-set format {fmt!r} (use {', '.join(FORMATS)})")


def loads(text: str, fmt: str) -> TaskSet:
    """Parses the one task set in ``text`` (format ``fmt``; a ``jsonl`` text must hold exactly
    one set: use :func:`loads_many` for batches)."""
    sets = loads_many(text, fmt)
    if len(sets) != 1:
        raise RtschedError(f"expected one task set, the text holds {len(sets)} (use rtsched.loads_many for batches)")
    return sets[0]


def load_many(path: str | os.PathLike, format: str | None = None) -> list[TaskSet]:
    """Reads every task set in a file (a ``.jsonl`` batch, or the one set of a ``.json``,
    ``.csv`` or rt-app file) as a list. ``format`` overrides the extension."""
    p = v.path(path, "path")
    fmt = _format(p, format)
    text = read_text(p)  # one-line errors that name the file
    try:
        return loads_many(text, fmt)
    except RtschedError as e:
        raise RtschedError(f"{p}: {e}") from None


def load(path: str | os.PathLike, format: str | None = None) -> TaskSet:
    """Reads the one task set in a file (``.json``, ``.csv``, a one-line ``.jsonl``, or an
    rt-app configuration with ``format="rt-app"``). A batch file is an error that points to
    :func:`load_many`."""
    sets = load_many(path, format)
    if len(sets) != 1:
        raise RtschedError(
            f"{os.fspath(path)}: holds {len(sets)} task sets; rtsched.load reads one, rtsched.load_many a batch"
        )
    return sets[0]


def save(path: str | os.PathLike, tasksets: TaskSet | Iterable[TaskSet]) -> None:
    """Writes one task set (.json, .csv) or many (.jsonl); the write is atomic."""
    p = v.path(path, "path")
    fmt = _format(p)
    sets = [tasksets] if isinstance(tasksets, TaskSet) else v.task_sets(tasksets, "tasksets")
    if fmt in ("json", "csv") and len(sets) != 1:
        raise RtschedError(f"{p!r}: a .{fmt} file holds exactly one task set, got {len(sets)}; use .jsonl")
    if fmt == "json":
        text = sets[0].to_json() + "\n"
    elif fmt == "csv":
        text = sets[0].to_csv()
    else:
        text = "".join(ts.to_json() + "\n" for ts in sets)
    write_text(p, text)
