"""Typing: every public function of the package carries type hints, and the stub of the
extension module (python/rtsched/_core.pyi) declares exactly what the module exports.
`mypy` (configured in pyproject.toml) checks the package against the stub in .ci/run."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import rtsched
from rtsched import _core

STUB = Path(rtsched.__file__).with_name("_core.pyi")


def public_modules():
    yield rtsched
    for info in pkgutil.walk_packages(rtsched.__path__, "rtsched."):
        if info.name.split(".")[-1].startswith("_") and info.name != "rtsched._core":
            continue
        if info.name in ("rtsched._core", "rtsched.__main__"):
            continue
        yield importlib.import_module(info.name)


def unannotated(fn) -> list[str]:
    sig = inspect.signature(fn)
    missing = [
        p.name
        for p in sig.parameters.values()
        if p.annotation is inspect.Parameter.empty and p.name not in ("self", "cls")
    ]
    if sig.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def test_every_public_function_has_type_hints():
    bad = []
    for mod in public_modules():
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            fns = [(name, obj)] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                fns += [
                    (f"{name}.{k}", v) for k, v in vars(obj).items() if inspect.isfunction(v) and not k.startswith("_")
                ]
            for qual, fn in fns:
                missing = unannotated(fn)
                if missing:
                    bad.append(f"{mod.__name__}.{qual}: {', '.join(missing)}")
    assert not bad, "public functions without type hints:\n" + "\n".join(sorted(bad))


def test_the_check_can_fail():
    def f(a, b: int): ...

    assert unannotated(f) == ["a", "return"]


def stub_names() -> set[str]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names - {"Time"}


def test_stub_declares_exactly_the_extension_module():
    exported = {n for n in dir(_core) if not n.startswith("__")} | {"__version__"}
    declared = stub_names()
    assert exported - declared == set(), f"exported by rtsched._core but missing from _core.pyi: {exported - declared}"
    assert declared - exported == set(), f"declared in _core.pyi but not exported: {declared - exported}"


def test_stub_signatures_match_the_bindings():
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            stub = [a.arg for a in node.args.args]
            real = list(inspect.signature(getattr(_core, node.name)).parameters)
            assert stub == real, f"_core.{node.name}: stub {stub} vs binding {real}"
