"""Reading and writing task-set files (formats: docs/formats.md).

``.json`` holds one task set, ``.jsonl`` one per line, ``.csv`` one task per row.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

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


def loads(text: str, fmt: str) -> list[TaskSet]:
    """Parses ``text`` in format ``fmt`` (``json``, ``jsonl`` or ``csv``) into task sets."""
    if fmt == "json":
        return [TaskSet.from_json(text)]
    if fmt == "jsonl":
        return parse_jsonl(text)
    if fmt == "csv":
        return [TaskSet.from_csv(text)]
    raise RtschedError(f"unknown task-set format {fmt!r} (use json, jsonl or csv)")


def load(path: str | os.PathLike) -> list[TaskSet]:
    """Reads a task-set file; always returns a list (one element for .json and .csv)."""
    path = os.fspath(path)
    fmt = _format(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise RtschedError(f"cannot read {path!r}: {e.strerror}") from None
    try:
        return loads(text, fmt)
    except RtschedError as e:
        raise RtschedError(f"{path}: {e}") from None


def save(path: str | os.PathLike, tasksets: TaskSet | Iterable[TaskSet]) -> None:
    """Writes one task set (.json, .csv) or many (.jsonl); the write is atomic."""
    path = os.fspath(path)
    fmt = _format(path)
    sets = [tasksets] if isinstance(tasksets, TaskSet) else list(tasksets)
    if fmt in ("json", "csv") and len(sets) != 1:
        raise RtschedError(f"{path!r}: a .{fmt} file holds exactly one task set, got {len(sets)}; use .jsonl")
    if fmt == "json":
        text = sets[0].to_json() + "\n"
    elif fmt == "csv":
        text = sets[0].to_csv()
    else:
        text = "".join(ts.to_json() + "\n" for ts in sets)
    write_text(path, text)
