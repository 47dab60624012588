"""Overhead-aware analysis from Python and the CLI (docs/overheads.md).

The model format, its evaluation and the inflation rules are Rust (``rtsched_model::overheads``,
``rtsched_analysis::overheads``); this module reads model files and directories, and adds the
``--overheads``/``--mechanism``/``--stat`` options to ``rtsched analyze``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
from collections.abc import Sequence
from typing import Any

from . import _core
from . import validate as v
from ._core import RtschedError


def overheads_text(overheads: dict | str | os.PathLike | None) -> str | None:
    """An overhead model or constants as JSON text: a dict, JSON text, or a path to a file."""
    if overheads is None:
        return None
    if isinstance(overheads, dict):
        return json.dumps(overheads)
    if isinstance(overheads, str) and overheads.lstrip().startswith("{"):
        return overheads
    if isinstance(overheads, (str, os.PathLike)):
        from .io import read_text  # one reader: binary and non-UTF-8 files are one-line errors

        try:
            return read_text(overheads, "overheads")
        except RtschedError as e:
            raise RtschedError(f"field 'overheads': {e}") from None
    raise RtschedError(f"field 'overheads': expected a dict, JSON text or a file path, got {type(overheads).__name__}")


def mechanisms() -> list[dict]:
    """The mechanism table: name, label, rule, model, in_runtime, dedicated_cpu, terms, contended,
    source (``rtsched_analysis::overheads::MECHANISMS``)."""
    return list(_core.overhead_mechanisms())


def mechanism_names() -> list[str]:
    return [m["name"] for m in mechanisms()]


def terms() -> list[dict]:
    """The overhead-term vocabulary: name, symbol, kind, description."""
    return list(_core.overhead_terms())


def count_terms() -> frozenset[str]:
    """The terms whose samples are counts, not times: those of the vocabulary of kind ``count``
    (e.g. RUN's ``tree_events``) and the mechanisms' own terms the runtime's registry marks
    ``count`` (e.g. push/pull's ``push_failure``, attempts per abandoned push). Their ``*_ns``
    columns hold numbers, never nanoseconds."""
    vocabulary = {t["name"] for t in _core.overhead_terms() if t["kind"] == "count"}
    mechanisms = {t["name"] for e in json.loads(_core.mechanisms()) for t in e["terms"] if t.get("count")}
    return frozenset(vocabulary | mechanisms)


def format_value(x: Any, count: bool) -> str:
    """One statistic of an overhead term as text: a time in the unit that suits it
    (``_core.format_time``), or for a count term (:func:`count_terms`) the plain number (an
    average to two decimals); ``-`` for None."""
    if x is None:
        return "-"
    if count:
        return str(int(x)) if float(x).is_integer() else f"{x:.2f}"
    return _core.format_time(round(x))


def read_model(path: str) -> dict:
    """Reads and validates one measured model file; returns ``{"path", "text", "scheduler", "m",
    "machine", "interrupted", "terms", "max_n", "published", "seconds_per_run"}`` (``published``:
    the source of a model built from a paper's numbers, else None). Errors name the file and field."""
    text = overheads_text(os.fspath(path)) or ""  # a path always gives its text (or raises)
    try:
        info = dict(_core.read_overhead_model(text))
    except RtschedError as e:
        raise RtschedError(f"{path}: {e}") from None
    info["path"] = os.fspath(path)
    info["text"] = text
    try:
        info["seconds_per_run"] = float(json.loads(text).get("seconds_per_run") or 0.0)
    except (ValueError, TypeError):
        info["seconds_per_run"] = 0.0
    return info


def load_models(source: Any) -> tuple[dict[str, dict], list[str]]:
    """The measured models of ``source`` keyed by the mechanism they were measured under (the
    file's ``scheduler``; the file name ``overheads-NAME[-...].json`` when it has none).

    ``source`` is a model file or a directory; in a directory every ``overheads-*.json`` is read
    (what ``rtsched measure-overheads --out DIR`` writes). When several files measure the same
    mechanism, the longest measurement wins (``seconds_per_run``, then the largest n). Returns
    the models and notes saying which file was chosen where there was a choice.
    """
    path = os.fspath(source)
    if os.path.isdir(path):
        files = sorted(glob.glob(os.path.join(path, "overheads-*.json")))
    elif os.path.isfile(path):
        files = [path]
    else:
        raise RtschedError(f"field 'overheads': {path!r} is neither a model file nor a directory")
    found: dict[str, list[dict]] = {}
    for f in files:
        info = read_model(f)
        name = info["scheduler"] or os.path.basename(f)[len("overheads-") : -len(".json")]
        found.setdefault(name, []).append(info)
    models, notes = {}, []
    for name, infos in sorted(found.items()):
        infos.sort(key=lambda i: (i["seconds_per_run"], i["max_n"], i["path"]), reverse=True)
        models[name] = infos[0]
        if len(infos) > 1:
            others = ", ".join(os.path.basename(i["path"]) for i in infos[1:])
            notes.append(f"{name}: using {os.path.basename(infos[0]['path'])} (longest measurement), not {others}")
    return models, notes


def overhead_args(
    overheads: dict | str | os.PathLike | None,
    mechanism: str,
    stat: str | None = None,
    cpd: int | str = 0,
    quantum: int | str = "1ms",
    extrapolate: bool = False,
) -> tuple[str, str, str | None, int, int, bool]:
    """The overhead part of an analysis request, checked: ``(model_text, mechanism, stat, cpd,
    quantum, extrapolate)``, as ``_core.analyze_sets`` and ``_core.analyze_overheads`` take it."""
    text = overheads_text(overheads)
    if text is None:
        raise RtschedError("field 'overheads': an overhead model or constants are required")
    if mechanism is None:
        raise RtschedError(f"field 'mechanism': required with overheads; one of {', '.join(mechanism_names())}")
    return (
        text,
        v.text(mechanism, "mechanism"),
        None if stat is None else v.choice(stat, "stat", ["max", "avg"]),
        v.duration(cpd, "cpd"),
        v.duration(quantum, "quantum", 1),
        v.boolean(extrapolate, "extrapolate"),
    )


def analyze_overheads(
    sets: Sequence,
    ms: Sequence[int],
    overheads: dict | str | os.PathLike | None,
    mechanism: str,
    stat: str | None = None,
    cpd: int | str = 0,
    quantum: int | str = "1ms",
    extrapolate: bool = False,
    max_steps: int = 1_000_000,
) -> list[dict]:
    """The ``overheads`` object of each set's analysis report alone (docs/cli.md, "analyze");
    :func:`rtsched.analyze_many` computes it with the tests, in the same call."""
    args = overhead_args(overheads, mechanism, stat, cpd, quantum, extrapolate)
    out = _core.analyze_overheads(
        v.task_sets(sets, "sets"), [v.processors(m) for m in ms], *args, v.max_steps(max_steps)
    )
    return [json.loads(s) for s in out]


# ---------------------------------------------------------------------------------------------
# `rtsched analyze` options (kept here so that the CLI module needs only two calls).


def add_analyze_options(p: argparse.ArgumentParser) -> None:
    """Adds --overheads, --mechanism, --stat, --cpd, --quantum, --extrapolate to ``analyze``."""
    g = p.add_argument_group("overhead-aware analysis (docs/overheads.md)")
    g.add_argument(
        "--overheads",
        metavar="MODEL.json|NAME",
        help="an overhead model written by `rtsched measure-overheads` (or constants), or a shipped model's "
        "name (docs/examples); adds hard and soft verdicts after task-parameter inflation",
    )
    g.add_argument(
        "--mechanism",
        metavar="NAME",
        help="the mechanism whose inflation rule applies: " + ", ".join(mechanism_names()),
    )
    g.add_argument(
        "--stat",
        choices=["max", "avg"],
        help="overhead statistic for both verdicts (default: max for hard, avg for soft real-time)",
    )
    g.add_argument(
        "--cpd",
        type=v.cli_duration("us"),
        default=0,
        help="cache-related preemption/migration delay per job, with a unit (default 0)",
    )
    g.add_argument(
        "--quantum", type=v.cli_duration("ms"), default="1ms", help="tick period / scheduling quantum (default 1ms)"
    )
    g.add_argument(
        "--extrapolate",
        action="store_true",
        help="extrapolate the model beyond its measured n and processor count (labelled as such)",
    )


def _word(side: dict) -> str:
    if side.get("gave_up"):
        return "gave up"
    return "schedulable" if side.get("schedulable") else "not schedulable"


def _verdict_words(rule: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """What the hard and soft verdicts of an inflation rule test (``rtsched_analysis::overheads::judge``)."""
    if rule.startswith("partitioned"):
        return (
            ("hard", "hard real-time, first-fit decreasing placement with the per-processor test"),
            ("soft", "soft real-time, first-fit decreasing placement with U <= 1 per processor"),
        )
    if rule.startswith("semi-partitioned"):
        placement = "the SP-RES placement with the per-processor test (Brandenburg & Gül, RTSS 2016)"
        return (("hard", f"hard real-time, {placement}"), ("soft", f"soft real-time, {placement}"))
    return (("hard", "hard real-time, combined G-EDF test"), ("soft", "soft real-time, U <= capacity"))


def table_lines(o: dict) -> list[str]:
    """Lines of the ``analyze`` table for one set's ``overheads`` object."""
    lines = [f"  overheads: {o['mechanism']} ({o['rule']}), capacity {o['capacity']}"]
    for key, what in _verdict_words(o["rule"]):
        s = o[key]
        u = "" if s["utilization"] is None else f", inflated U = {s['utilization']:.4f}"
        why = f" ({s['reason']})" if s.get("reason") else ""
        lines.append(f"    {key} ({what}, {s['stat']} overheads{u}): {_word(s)}{why}")
    for n in o["notes"]:
        lines.append(f"    note: {n}")
    return lines
