"""The data shipped with the package, found by name from any folder.

``rtsched/data`` (the repository's ``docs/examples`` links to it, so that there is one copy)
holds the examples (task sets: ``spres-fig1.json``, ``control.json``, ...) and the overhead
models measured on the development machine (``overheads-*.json``); a subfolder holding
``overheads-*.json`` is a set of models named by the folder (``--overheads NAME`` of
``rtsched reproduce`` reads a set; ``analyze`` takes the set's model for its ``--mechanism``).

Every lookup tries the argument as a path first; only a name that is no existing file or folder
is looked up among the shipped ones (names are matched against the listing, never joined into
a path).
"""

from __future__ import annotations

import os
from pathlib import Path

from ._core import RtschedError

#: The shipped data: examples and overhead models.
DATA = Path(__file__).resolve().parent / "data"

_MODEL_GLOB = "overheads-*.json"


def models() -> dict[str, Path]:
    """Shipped overhead models by name: each ``overheads-*.json`` by its stem, each folder of
    models (a set) by the folder's name."""
    out: dict[str, Path] = {p.stem: p for p in sorted(DATA.glob(_MODEL_GLOB)) if p.is_file()}
    for d in sorted(p for p in DATA.iterdir() if p.is_dir()):
        if any(d.glob(_MODEL_GLOB)):
            out[d.name] = d
    return out


def examples() -> dict[str, Path]:
    """Shipped example task sets by file name (``spres-fig1.json``, ``control.csv``, ...)."""
    return {
        p.name: p
        for p in sorted(DATA.iterdir())
        if p.is_file() and p.suffix in (".json", ".jsonl", ".csv") and not p.name.startswith("overheads-")
    }


def resolve_overheads(arg: str | os.PathLike) -> str:
    """``--overheads ARG``: an existing file or folder as given; JSON text (``{...}``) or a path
    with a folder in it as given (its reader reports a missing file); else a shipped model or set
    by name (``overheads-gsn-edf-2cpu``, with or without ``.json``). An unknown name is an error
    listing the shipped names in one line."""
    text = os.fspath(arg)
    if text.lstrip().startswith("{") or os.path.exists(text) or os.path.dirname(text):
        return text
    shipped = models()
    key = text[: -len(".json")] if text.endswith(".json") else text
    if key in shipped:
        return str(shipped[key])
    raise RtschedError(
        f"field 'overheads': {text!r} is no file, folder or shipped model; shipped: {', '.join(shipped)}"
    )


def resolve_model_folder(arg: str | os.PathLike) -> str:
    """A folder of models (a set, a ``measure-overheads --out DIR``, a campaign with ``m<M>/``
    subfolders): an existing path as given, else a shipped folder by name (``campaign-16cpu``)."""
    text = os.fspath(arg)
    if os.path.exists(text) or os.path.dirname(text):
        return text
    folders = {p.name: p for p in sorted(DATA.iterdir()) if p.is_dir() and any(p.rglob(_MODEL_GLOB))}
    if text in folders:
        return str(folders[text])
    raise RtschedError(f"{text!r} is no folder and no shipped folder of models; shipped: {', '.join(folders)}")


def resolve_model_file(arg: str | os.PathLike, mechanism: str | None = None) -> str:
    """Like :func:`resolve_overheads`, for a command that takes one model: a folder (a set, or a
    ``measure-overheads --out DIR``) gives its model for ``mechanism`` (the one measured under
    the mechanism's name, else under its model's, as sweeps choose)."""
    path = resolve_overheads(arg)
    if not os.path.isdir(path):
        return path
    from .experiments.overheads import model_key
    from .overheads import load_models, mechanisms

    found, _notes = load_models(path)
    have = ", ".join(found) or "none"
    if mechanism is None:
        raise RtschedError(f"field 'overheads': {os.fspath(arg)!r} is a folder of models ({have}): give --mechanism")
    row = next((m for m in mechanisms() if m["name"] == mechanism), None)
    key = model_key(row, found) if row is not None else (mechanism if mechanism in found else None)
    if key is None:
        raise RtschedError(f"field 'overheads': {os.fspath(arg)!r} has no model for {mechanism!r}; it has: {have}")
    return str(found[key]["path"])


def resolve_example(arg: str | None) -> str | None:
    """A task-set argument: an existing path (or ``-``, or None) as given; else a shipped example
    by file name (``spres-fig1.json``), with a note on stderr saying which file is read. Anything
    else is returned as given, for the loader to report."""
    if arg is None or arg == "-" or os.path.exists(arg):
        return arg
    hit = examples().get(arg)
    if hit is None:
        return arg
    import sys

    print(f"rtsched: {arg} is not in this folder; reading the shipped example {hit}", file=sys.stderr)
    return str(hit)
