#!/usr/bin/env python3
"""Finds import circles among the modules of python/rtsched.

    python scripts/import_circles.py             # exit 1 if there is any circle
    python scripts/import_circles.py --allow 1   # exit 1 if there are more than one

Every module under python/rtsched is parsed with ``ast`` (nothing is imported) and every import
statement in it becomes an edge of the module graph: ``import rtsched.x``, ``from rtsched.x import
y``, ``from . import x``, ``from .x import y`` and ``from ..x import y`` all count, and so do the
imports inside functions and under ``if TYPE_CHECKING:``, which are marked (``[in function]``,
``[type checking]``) because they are the ones that hide a circle from the interpreter. An import
of ``p.x`` is an edge to the module ``p.x``; ``from p import x`` is an edge to ``p.x`` when that is
a module and to ``p`` (its ``__init__``) otherwise. The implicit import of a package's
``__init__`` by its submodules is not an edge (every module would be in a circle with its package).

A circle is a strongly connected component of more than one module; each is printed with the
edges inside it.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "rtsched"


def module_names(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under ``package``; an extension module
    (its ``.pyi`` stub, e.g. ``rtsched._core``) is a module too, one that imports nothing here."""
    out = {}
    for path in sorted(package.rglob("*.py")) + sorted(package.rglob("*.pyi")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.setdefault(".".join(parts), path)
    return out


class _Imports(ast.NodeVisitor):
    """Collects (imported name, names imported from it, kind) of one module."""

    def __init__(self) -> None:
        self.found: list[tuple[str, int, list[str], str]] = []  # (module, level, names, kind)
        self._function = 0
        self._type_checking = 0

    def _kind(self) -> str:
        if self._type_checking:
            return "type checking"
        return "in function" if self._function else "top"

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function += 1
        self.generic_visit(node)
        self._function -= 1

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
        if name == "TYPE_CHECKING":
            self._type_checking += 1
            for stmt in node.body:
                self.visit(stmt)
            self._type_checking -= 1
            for stmt in node.orelse:
                self.visit(stmt)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.found.append((alias.name, 0, [], self._kind()))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append((node.module or "", node.level, [a.name for a in node.names], self._kind()))


def edges(modules: dict[str, Path]) -> dict[tuple[str, str], set[str]]:
    """(importer, imported) -> the kinds of import that make the edge."""
    out: dict[tuple[str, str], set[str]] = {}
    for name, path in modules.items():
        if path.suffix != ".py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        visitor = _Imports()
        visitor.visit(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for target, level, names, kind in visitor.found:
            if level:
                base = package.split(".")
                if level > 1:
                    base = base[: len(base) - (level - 1)]
                target = ".".join(base + ([target] if target else []))
            hits = []
            if names:
                hits = [f"{target}.{n}" for n in names if f"{target}.{n}" in modules]
                if len(hits) < len(names) and target in modules:
                    hits.append(target)  # some names are attributes of the module itself
            elif target in modules:
                hits = [target]
            for hit in hits:
                if hit != name:
                    out.setdefault((name, hit), set()).add(kind)
    return out


def circles(nodes: list[str], graph: dict[tuple[str, str], set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in graph:
        succ[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(nodes) + 100))
    for v in sorted(nodes):
        if v not in index:
            connect(v)
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Print the import circles among python/rtsched's modules.")
    ap.add_argument("--allow", type=int, default=0, metavar="N", help="exit 0 with up to N circles (default 0)")
    ap.add_argument("--package", type=Path, default=PACKAGE, help="the package folder (default python/rtsched)")
    args = ap.parse_args(argv)
    modules = module_names(args.package)
    graph = edges(modules)
    found = circles(list(modules), graph)
    for i, comp in enumerate(found, 1):
        print(f"circle {i}: {len(comp)} modules: {', '.join(comp)}")
        members = set(comp)
        for (a, b), kinds in sorted(graph.items()):
            if a in members and b in members:
                marks = "".join(f" [{k}]" for k in sorted(kinds) if k != "top")
                print(f"  {a} -> {b}{marks}")
    print(f"{len(found)} import circle(s) among {len(modules)} modules (allowed: {args.allow})")
    return 1 if len(found) > args.allow else 0


if __name__ == "__main__":
    sys.exit(main())
