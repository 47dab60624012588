#!/usr/bin/env python3
"""Regenerates docs/api.md, the Python API reference, from the docstrings and type hints.

    python scripts/gen_api_docs.py           # write docs/api.md
    python scripts/gen_api_docs.py --check   # exit 1 if docs/api.md is not what it would write

Python functions are documented from their signatures and docstrings; the classes and functions
of the Rust extension module from the typed stub python/rtsched/_core.pyi (signatures) and the
module itself (docstrings). tests/test_docs.py runs ``--check``, so the reference cannot drift;
both modes refuse to run while a public name of the package (``rtsched.__all__``) is missing from
``SECTIONS``.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "api.md"

#: (section title, intro, [qualified names]) in the order of the reference.
SECTIONS: list[tuple[str, str, list[str]]] = [
    (
        "Task sets",
        "Times are integer nanoseconds; wherever a time is taken, a duration string such as "
        '`"2ms"` works too. Task sets are picklable and copyable (multiprocessing, joblib, Dask).',
        ["rtsched.Task", "rtsched.TaskSet"],
    ),
    (
        "Files",
        "Formats: docs/formats.md.",
        ["rtsched.load", "rtsched.load_many", "rtsched.loads", "rtsched.loads_many", "rtsched.save"],
    ),
    ("Generation", "Generators and distributions: docs/generators.md.", ["rtsched.generate"]),
    (
        "Analysis and placement",
        "Results are dicts shaped like the CLI's `--json` output (docs/cli.md).",
        [
            "rtsched.analyze",
            "rtsched.analyze_many",
            "rtsched.analyze_table",
            "rtsched.tests_available",
            "rtsched.partition",
        ],
    ),
    (
        "DAG task sets",
        "A DAG set is the JSON text of a DAG file (docs/dag.md, docs/formats.md).",
        [
            "rtsched.read_dag",
            "rtsched.analyze_dag",
            "rtsched.generate_dag",
            "rtsched.dag_tests_available",
            "rtsched.dag_to_dot",
        ],
    ),
    (
        "Simulation",
        "The simulator: docs/simulator.md; fork-join task sets: docs/rtws.md; DAG task sets: docs/dag.md. "
        "In the signatures, "
        "`Time` is an integer number of ns or a duration string, `PathArg` a path (str or "
        '`os.PathLike`) and `Window` a Gantt window, `"START:END"` or a (start, end) pair of times.',
        [
            "rtsched.simulate",
            "rtsched.simulate_trace",
            "rtsched.simulate_forkjoin",
            "rtsched.simulate_dag",
            "rtsched.simulation.schedulers",
            "rtsched.simulation.format_table",
            "rtsched.simulation.format_dag_table",
        ],
    ),
    (
        "Figures",
        "Every function returns a `matplotlib.figure.Figure` (shown inline in a notebook) and saves "
        "it when given a path.",
        ["rtsched.gantt", "rtsched.plots.acceptance_plot"],
    ),
    (
        "Real cores",
        "The runtime: docs/runtime.md.",
        ["rtsched.run", "rtsched.run_forkjoin", "rtsched.schedulers", "rtsched.runtime.measure_overheads"],
    ),
    (
        "rt-app",
        "The bridge to rt-app and the Linux kernel's scheduler: docs/formats.md, rt-app.",
        ["rtsched.rtapp.to_rtapp", "rtsched.rtapp.dumps", "rtsched.rtapp.from_rtapp", "rtsched.rtapp.read_log"],
    ),
    (
        "Experiments",
        "Sweeps, results and the figure registry: docs/experiments.md.",
        [
            "rtsched.experiments.load_spec",
            "rtsched.experiments.run_sweep",
            "rtsched.experiments.registry.reproduce",
            "rtsched.experiments.registry.available",
            "rtsched.experiments.plot.plot_results",
        ],
    ),
    (
        "Durations",
        "",
        ["rtsched.parse_duration", "rtsched.format_duration", "rtsched.format_time"],
    ),
    (
        "Errors",
        "Every error rtsched raises is one of these; all but `InternalError` are `ValueError`s.",
        [
            "rtsched.RtschedError",
            "rtsched.NotPlacedError",
            "rtsched.SpecError",
            "rtsched.EvaluatorError",
            "rtsched.EvaluatorMissing",
            "rtsched.InternalError",
        ],
    ),
]


def resolve(qual: str) -> Any:
    """The object named ``qual``: attributes first (``rtsched.simulate`` is the function), then
    submodules that are not imported yet (``rtsched.rtapp``)."""
    parts = qual.split(".")
    obj: Any = importlib.import_module(parts[0])
    for i, p in enumerate(parts[1:], 1):
        if hasattr(obj, p):
            obj = getattr(obj, p)
        else:
            obj = importlib.import_module(".".join(parts[: i + 1]))
    return obj


def stub_defs() -> dict[str, ast.AST]:
    """Name (``f``, ``Class``, ``Class.method``) -> its definition in _core.pyi."""
    tree = ast.parse((ROOT / "python" / "rtsched" / "_core.pyi").read_text(encoding="utf-8"))
    out: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        if isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef):
                    out.setdefault(f"{node.name}.{sub.name}", sub)
    return out


STUB = stub_defs()


def rst_to_md(doc: str) -> str:
    doc = re.sub(r":(?:func|class|data|mod|meth|attr):`~?([^`]+)`", r"`\1`", doc)
    return doc.replace("``", "`")


def fence_examples(doc: str) -> str:
    """Doctest examples (``>>>`` lines and their output, up to a blank line) as code blocks."""
    out: list[str] = []
    in_block = False
    for line in doc.splitlines():
        if line.lstrip().startswith(">>>") and not in_block:
            out.append("```python")
            in_block = True
        elif in_block and not line.strip():
            out.append("```")
            in_block = False
        out.append(line)
    if in_block:
        out.append("```")
    return "\n".join(out)


def clean_doc(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    return fence_examples(rst_to_md(textwrap.dedent(doc)).strip())


def stub_signature(fn: ast.FunctionDef, drop_self: bool) -> str:
    args = ast.unparse(fn.args)
    if drop_self:
        args = re.sub(r"^self(, )?", "", args)
    ret = f" -> {ast.unparse(fn.returns)}" if fn.returns is not None else ""
    return f"({args}){ret}"


def default_text(v: Any) -> str:
    if v is sys.stderr:
        return "sys.stderr"
    r = repr(v)
    return "..." if r.startswith("<") else r


def py_signature(fn: Any) -> str:
    sig = inspect.signature(fn)
    parts = []
    star_done = False
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        if p.kind is p.VAR_POSITIONAL:
            star_done = True
        prefix = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else ""
        text = prefix + p.name
        if p.annotation is not p.empty:
            ann = p.annotation if isinstance(p.annotation, str) else inspect.formatannotation(p.annotation)
            text += f": {ann}"
        if p.default is not p.empty:
            text += f" = {default_text(p.default)}"
        parts.append(text)
    ret = sig.return_annotation
    ret_text = "" if ret is sig.empty else f" -> {ret if isinstance(ret, str) else inspect.formatannotation(ret)}"
    return f"({', '.join(parts)}){ret_text}"


def document(qual: str) -> list[str]:
    obj = resolve(qual)
    name = qual
    out: list[str] = []
    if inspect.isclass(obj):
        bases = [b.__name__ for b in obj.__bases__ if b is not object]
        core = importlib.import_module("rtsched._core")
        in_stub = getattr(core, obj.__name__, None) is obj and obj.__name__ in STUB
        if in_stub and isinstance(STUB.get(f"{obj.__name__}.__init__"), ast.FunctionDef):
            init = STUB[f"{obj.__name__}.__init__"]
            assert isinstance(init, ast.FunctionDef)
            head = f"class {name}{stub_signature(init, True).split(' -> ')[0]}"
        else:
            head = f"class {name}" + (f"({', '.join(bases)})" if bases else "")
        out += [f"### `{head}`", "", clean_doc(obj), ""]
        if in_stub:
            cls = STUB[obj.__name__]
            assert isinstance(cls, ast.ClassDef)
            for sub in cls.body:
                if not isinstance(sub, ast.FunctionDef) or sub.name.startswith("_"):
                    continue
                deco = {ast.unparse(d) for d in sub.decorator_list}
                if any(d.endswith(".setter") for d in deco):
                    continue
                member = getattr(obj, sub.name)
                if "property" in deco:
                    ret = ast.unparse(sub.returns) if sub.returns is not None else ""
                    settable = any(
                        isinstance(s, ast.FunctionDef)
                        and f"{sub.name}.setter" in {ast.unparse(d) for d in s.decorator_list}
                        for s in cls.body
                    )
                    kind = "property, settable" if settable else "property"
                    doc = clean_doc(member)
                    first = doc.splitlines()[0] if doc else ""
                    out.append(f"- `{sub.name}: {ret}` ({kind})" + (f" — {first}" if first else ""))
                else:
                    static = "staticmethod" in deco
                    sig = stub_signature(sub, not static)
                    doc = clean_doc(member)
                    first = " ".join(doc.split("\n\n")[0].split()) if doc else ""
                    label = f"{obj.__name__}.{sub.name}" if static else f".{sub.name}"
                    out.append(f"- `{label}{sig}`" + (f" — {first}" if first else ""))
            out.append("")
        return out
    if getattr(obj, "__module__", "") == "rtsched._core" or type(obj).__name__ == "builtin_function_or_method":
        fn = STUB.get(obj.__name__)
        assert isinstance(fn, ast.FunctionDef), f"{qual} is not in _core.pyi"
        sig = stub_signature(fn, False)
    else:
        sig = py_signature(obj)
    out += [f"### `{name}{sig}`", "", clean_doc(obj), ""]
    return out


def undocumented(sections: list[tuple[str, str, list[str]]] = SECTIONS) -> list[str]:
    """The public names of the package (``rtsched.__all__``, dunders aside) that no entry of
    ``sections`` documents: an entry documents a name when it resolves to the same object, under
    whichever module it is written."""
    import rtsched

    documented = [resolve(q) for _, _, names in sections for q in names]
    return [
        name
        for name in rtsched.__all__
        if not name.startswith("__") and not any(getattr(rtsched, name) is obj for obj in documented)
    ]


def render() -> str:
    lines = [
        "# Python API reference",
        "",
        "Generated from the docstrings and type hints by `python scripts/gen_api_docs.py`; do not edit by",
        "hand (tests/test_docs.py checks that it is up to date). The command line is in [cli.md](cli.md);",
        "coming from SchedCAT or SimSo: [coming-from.md](coming-from.md).",
        "",
    ]
    for title, intro, names in SECTIONS:
        lines += [f"## {title}", ""]
        if intro:
            lines += [intro, ""]
        for q in names:
            lines += document(q)
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.rstrip() + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with docs/api.md instead of writing it")
    args = ap.parse_args()
    missing = undocumented()
    if missing:
        print(
            f"{OUT} would miss public names: {', '.join(missing)}; add them to SECTIONS in {__file__}", file=sys.stderr
        )
        return 1
    text = render()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is out of date: run python scripts/gen_api_docs.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
