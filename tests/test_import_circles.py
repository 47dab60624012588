"""scripts/import_circles.py: the import graph of python/rtsched and its circles (issue 21)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _checker():
    spec = importlib.util.spec_from_file_location("import_circles", ROOT / "scripts" / "import_circles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _package(tmp_path, files: dict) -> Path:
    pkg = tmp_path / "pkg"
    for name, text in files.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_python_rtsched_has_no_import_circle(capsys):
    assert _checker().main([]) == 0, capsys.readouterr().out
    assert "0 import circle(s)" in capsys.readouterr().out


def test_a_circle_through_a_function_level_import_is_found_and_marked(tmp_path, capsys):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from .b import g\n",
            "b.py": "def g():\n    from .a import f\n",
            "sub/__init__.py": "",
            "sub/c.py": "from .. import a\n",  # into the circle, not part of it
        },
    )
    check = _checker()
    assert check.main(["--package", str(pkg)]) == 1
    out = capsys.readouterr().out
    assert "circle 1: 2 modules: pkg.a, pkg.b" in out
    assert "  pkg.b -> pkg.a [in function]" in out and "  pkg.a -> pkg.b\n" in out
    assert "pkg.sub.c" not in out
    assert "1 import circle(s) among 5 modules (allowed: 0)" in out
    assert check.main(["--package", str(pkg), "--allow", "1"]) == 0


def test_every_spelling_of_an_import_is_an_edge(tmp_path, capsys):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "from . import d\n",
            "_ext.pyi": "def f() -> int: ...\n",
            "a.py": "import pkg.b\n",
            "b.py": "from . import c\nfrom . import _ext\n",
            "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import X\n",
            "d.py": "from . import _ext\n",
        },
    )
    assert _checker().main(["--package", str(pkg)]) == 1
    out = capsys.readouterr().out
    assert "circle 1: 3 modules: pkg.a, pkg.b, pkg.c" in out
    assert "  pkg.c -> pkg.a [type checking]" in out
    # `from . import _ext` names the extension module (its stub), not the package, which imports d:
    # no circle pkg <-> pkg.d.
    assert "pkg.d" not in out and "pkg._ext" not in out
    assert "1 import circle(s)" in out


def test_a_package_without_circles_passes(tmp_path, capsys):
    pkg = _package(tmp_path, {"__init__.py": "from .a import f\n", "a.py": "from .b import g\n", "b.py": "g = 1\n"})
    assert _checker().main(["--package", str(pkg)]) == 0
    assert "0 import circle(s) among 3 modules" in capsys.readouterr().out
