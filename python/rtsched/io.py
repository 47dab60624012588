"""Reading and writing task-set files (formats: docs/formats.md).

``.json`` holds one task set, ``.jsonl`` one per line, ``.csv`` one task per row. Files are
read as UTF-8 (a leading byte-order mark is skipped); a binary or non-UTF-8 file is one
:class:`rtsched.RtschedError` naming the file, as is every other problem.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from . import validate as v
from ._core import RtschedError, TaskSet, parse_jsonl
from .output import write_text


def _format(path: str) -> str:
    lower = str(path).lower()
    if lower.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if lower.endswith(".json"):
        return "json"
    if lower.endswith(".csv"):
        return "csv"
    raise RtschedError(f"cannot tell the format of {path!r}: use a .json, .jsonl or .csv extension")


def read_text(path, what: str = "file") -> str:
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


def loads(text: str, fmt: str) -> list[TaskSet]:
    """Parses ``text`` in format ``fmt`` (``json``, ``jsonl`` or ``csv``) into task sets."""
    text = v.text(text, "text")
    fmt = v.choice(fmt, "fmt", ["json", "jsonl", "csv"])
    if fmt == "json":
        return [TaskSet.from_json(text)]
    if fmt == "jsonl":
        return parse_jsonl(text)
    return [TaskSet.from_csv(text)]


def load(path: str | os.PathLike) -> list[TaskSet]:
    """Reads a task-set file; always returns a list (one element for .json and .csv)."""
    path = v.path(path, "path")
    fmt = _format(path)
    text = read_text(path)
    try:
        return loads(text, fmt)
    except RtschedError as e:
        raise RtschedError(f"{path}: {e}") from None


def save(path: str | os.PathLike, tasksets: TaskSet | Iterable[TaskSet]) -> None:
    """Writes one task set (.json, .csv) or many (.jsonl); the write is atomic."""
    path = v.path(path, "path")
    fmt = _format(path)
    if isinstance(tasksets, TaskSet):
        sets = [tasksets]
    else:
        sets = v.task_sets(tasksets, "tasksets")
    if fmt in ("json", "csv") and len(sets) != 1:
        raise RtschedError(f"{path!r}: a .{fmt} file holds exactly one task set, got {len(sets)}; use .jsonl")
    if fmt == "json":
        text = sets[0].to_json() + "\n"
    elif fmt == "csv":
        text = sets[0].to_csv()
    else:
        text = "".join(ts.to_json() + "\n" for ts in sets)
    write_text(path, text)
