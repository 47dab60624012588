"""Reading and writing task-set files (formats: docs/formats.md).

``.json`` holds one task set, ``.jsonl`` one per line, ``.csv`` one task per row; rt-app
configurations (``format="rt-app"``) are read through :mod:`rtsched.rtapp`.

:func:`load` reads a file that holds one task set and returns it; :func:`load_many` reads a
batch (any format) and returns a list.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

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


def loads_many(text: str, fmt: str) -> list[TaskSet]:
    """Parses ``text`` in format ``fmt`` (``json``, ``jsonl``, ``csv`` or ``rt-app``) into a list
    of task sets (one element except for ``jsonl``)."""
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


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise RtschedError(f"cannot read {path!r}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise RtschedError(f"cannot read {path!r}: not UTF-8 text (byte {e.start})") from None


def load_many(path: str | os.PathLike, format: str | None = None) -> list[TaskSet]:
    """Reads every task set in a file (a ``.jsonl`` batch, or the one set of a ``.json``,
    ``.csv`` or rt-app file) as a list. ``format`` overrides the extension."""
    p = os.fspath(path)
    fmt = _format(p, format)
    try:
        return loads_many(_read(p), fmt)
    except RtschedError as e:
        if str(e).startswith(f"cannot read {p!r}"):
            raise
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
    p = os.fspath(path)
    fmt = _format(p)
    sets = [tasksets] if isinstance(tasksets, TaskSet) else list(tasksets)
    if fmt in ("json", "csv") and len(sets) != 1:
        raise RtschedError(f"{p!r}: a .{fmt} file holds exactly one task set, got {len(sets)}; use .jsonl")
    if fmt == "json":
        text = sets[0].to_json() + "\n"
    elif fmt == "csv":
        text = sets[0].to_csv()
    else:
        text = "".join(ts.to_json() + "\n" for ts in sets)
    write_text(p, text)
