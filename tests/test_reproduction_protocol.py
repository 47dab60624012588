"""Every registered reproduction is a module of the one protocol (rtsched.experiments.reproduction)
and is listed where mypy checks it against that protocol (registry.py, under TYPE_CHECKING)."""

import ast
from pathlib import Path

from rtsched.experiments import registry
from rtsched.experiments.registry import REPRODUCTIONS, module
from rtsched.experiments.reproduction import Reproduction, SweepReproduction


def _checked_lists() -> dict:
    """name of each list annotated under ``if TYPE_CHECKING:`` in registry.py -> module names in it."""
    tree = ast.parse(Path(registry.__file__).read_text(encoding="utf-8"))
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.List):
            out[ast.unparse(node.annotation)] = {e.id for e in node.value.elts if isinstance(e, ast.Name)}
    return out


def test_every_reproduction_is_of_its_protocol_and_checked_by_mypy():
    lists = _checked_lists()
    sweeps, tabulated = lists["list[SweepReproduction]"], lists["list[Reproduction]"]
    assert not sweeps & tabulated
    assert sweeps | tabulated == set(REPRODUCTIONS.values())
    for name, mod_name in REPRODUCTIONS.items():
        mod = module(name)
        if mod.KIND is None:
            assert mod_name in sweeps and isinstance(mod, SweepReproduction), name
        else:
            assert mod_name in tabulated and isinstance(mod, Reproduction), name
            assert not hasattr(mod, "report"), f"{name}: the one report (reproduction.report) draws it"
