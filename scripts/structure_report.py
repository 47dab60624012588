"""The structure numbers issue 21 asks to measure before and after a change.

    python scripts/structure_report.py [--repo DIR] [--json]

Prints, for the tree at DIR (default: this checkout):

* Rust module circles: per crate, the strongly connected components (more than one module) of the
  graph "module A names an item of module B" (``crate::a::b::Item`` and ``super::b::Item`` paths,
  in ``use`` lines or in code). Edges between a module and its ancestors or descendants are left
  out: a child naming its parent's items (``super::X``) and a parent re-exporting its children
  are the shape of Rust's module tree, not a circle between rooms;
* Python import circles, from scripts/import_circles.py when it exists;
* public ``Result<_, String>`` items (``pub fn`` and ``pub type``, signatures over several lines
  included) in crates/runtime, crates/policy and crates/trace;
* files over 500 lines in crates/runtime/src and python/rtsched.

The duplicate finder's pairs are the library's ``duplicates`` command (its first line counts
them); it is not run from here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

PATH_RE = re.compile(r"\b(crate|super)((?:::[a-z_][a-z0-9_]*)+)")
PUB_ITEM_RE = re.compile(r"^\s*pub\s+(?:const\s+|unsafe\s+|async\s+)*(fn|type)\s+(\w+)", re.M)
STRING_ERR_RE = re.compile(r"Result<[^;{]*,\s*String\s*>")


def rust_modules(src: Path) -> dict[tuple[str, ...], Path]:
    """Module path (as a tuple) → file, for one crate's src folder."""
    mods: dict[tuple[str, ...], Path] = {}
    for f in src.rglob("*.rs"):
        parts = list(f.relative_to(src).with_suffix("").parts)
        if parts[-1] in ("lib", "main", "mod"):
            parts.pop()
        if "bin" in parts[:1]:
            continue
        mods[tuple(parts)] = f
    return mods


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    # A file's unit tests (`#[cfg(test)] mod tests { ... }` at its end) are not its structure.
    i = text.find("#[cfg(test)]\nmod tests")
    return text if i < 0 else text[:i]


def _resolve(mods: dict, here: tuple[str, ...], kind: str, segs: list[str]) -> tuple[str, ...] | None:
    base = () if kind == "crate" else here[:-1]
    # super:: in a file module `a/b.rs` (here = (a, b)) names a; `..::super::super` is rare here.
    while segs and segs[0] == "super":
        base = base[:-1]
        segs = segs[1:]
    best = None
    for k in range(len(segs) + 1):
        cand = base + tuple(segs[:k])
        if cand in mods:
            best = cand
    return best


def rust_circles(repo: Path) -> dict[str, list[list[str]]]:
    out: dict[str, list[list[str]]] = {}
    for crate in sorted((repo / "crates").iterdir()):
        src = crate / "src"
        if not src.is_dir():
            continue
        mods = rust_modules(src)
        edges: dict[tuple, set] = {m: set() for m in mods}
        for here, f in mods.items():
            text = _strip_comments(f.read_text(encoding="utf-8", errors="replace"))
            for kind, rest in PATH_RE.findall(text):
                target = _resolve(mods, here, kind, rest.strip(":").split("::"))
                if target is None or target == here:
                    continue
                n = min(len(target), len(here))
                if target[:n] == here[:n]:
                    continue  # an ancestor or a descendant
                edges[here].add(target)
        name = {m: "::".join(m) or "crate" for m in mods}
        graph = {(name[a], name[b]): {"top"} for a, targets in edges.items() for b in targets}
        comps = CIRCLES.circles(sorted(name.values()), graph)
        if comps:
            out[crate.name] = comps
    return out


def string_errors(repo: Path, crates=("runtime", "policy", "trace")) -> list[str]:
    hits = []
    for c in crates:
        for f in sorted((repo / "crates" / c / "src").rglob("*.rs")):
            text = _strip_comments(f.read_text(encoding="utf-8", errors="replace"))
            for m in PUB_ITEM_RE.finditer(text):
                end = len(text)
                for stop in ("{", ";"):
                    i = text.find(stop, m.end())
                    if i != -1:
                        end = min(end, i)
                if STRING_ERR_RE.search(text[m.end() : end]):
                    line = text.count("\n", 0, m.start()) + 1
                    hits.append(f"{f.relative_to(repo)}:{line} {m.group(1)} {m.group(2)}")
    return hits


def long_files(repo: Path, limit: int = 500) -> list[tuple[str, int]]:
    out = []
    for root, pattern in (("crates/runtime/src", "*.rs"), ("python/rtsched", "*.py")):
        for f in sorted((repo / root).rglob(pattern)):
            n = sum(1 for _ in f.open(encoding="utf-8", errors="replace"))
            if n > limit:
                out.append((str(f.relative_to(repo)), n))
    return sorted(out, key=lambda x: -x[1])


def _import_circles(script: Path):
    """scripts/import_circles.py as a module: its graph walk (``circles``, Tarjan's strongly
    connected components) serves the Rust graph too."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_import_circles", script)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {script}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: This checkout's circle finder (the Rust graph uses it whatever --repo names).
CIRCLES = _import_circles(Path(__file__).resolve().parent / "import_circles.py")


def python_circles(repo: Path) -> list | None:
    """scripts/import_circles.py's circles among the tree's python/rtsched modules."""
    script = repo / "scripts" / "import_circles.py"
    if not script.exists():
        return None
    mod = _import_circles(script)
    modules = mod.module_names(repo / "python" / "rtsched")
    return mod.circles(list(modules), mod.edges(modules))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    repo = Path(a.repo).resolve()
    report = {
        "rust_circles": rust_circles(repo),
        "python_circles": python_circles(repo),
        "public_string_errors": string_errors(repo),
        "files_over_500_lines": long_files(repo),
    }
    if a.json:
        print(json.dumps(report, indent=2))
        return 0
    rc = report["rust_circles"]
    print(f"Rust module circles: {sum(len(v) for v in rc.values())}")
    for crate, comps in rc.items():
        for comp in comps:
            print(f"  {crate}: {' <-> '.join(comp)}")
    pc = report["python_circles"]
    print("Python import circles: " + ("(scripts/import_circles.py not in this tree)" if pc is None else str(len(pc))))
    for comp in pc or []:
        print(f"  {' <-> '.join(comp) if isinstance(comp, list) else comp}")
    se = report["public_string_errors"]
    print(f"public Result<_, String> items in runtime, policy, trace: {len(se)}")
    for h in se:
        print(f"  {h}")
    lf = report["files_over_500_lines"]
    print(f"files over 500 lines in crates/runtime/src and python/rtsched: {len(lf)}")
    for path, n in lf:
        print(f"  {n:5d} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
