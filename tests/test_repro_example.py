"""The example of docs/reproductions.md ("Adding a reproduction") runs as written: its spec and its
module, taken from the page, are a reproduction of the one protocol, and the one runner and the
one report run it end to end (points, tables, figure, CSV, resume); its spec is declared."""

import importlib
import re
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from rtsched.api import generate
from rtsched.experiments.errors import SpecError
from rtsched.experiments.reproduction import Reproduction, report
from rtsched.experiments.sweep import run_sweep

ROOT = Path(__file__).resolve().parent.parent


def _blocks():
    text = (ROOT / "docs" / "reproductions.md").read_text(encoding="utf-8")
    section = text[text.index("## Adding a reproduction") :]
    toml = re.findall(r"```toml\n(.*?)```", section, flags=re.S)
    python = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(toml) == 1 and len(python) == 1, "the section holds one spec and one module"
    return toml[0], python[0]


@pytest.fixture
def example(tmp_path, monkeypatch):
    spec_text, module_text = _blocks()
    (tmp_path / "gfb_demo.py").write_text(module_text, encoding="utf-8")
    (tmp_path / "gfb-demo.toml").write_text(spec_text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("gfb_demo", None)
    mod = importlib.import_module("gfb_demo")
    yield mod, tmp_path / "gfb-demo.toml"
    sys.modules.pop("gfb_demo", None)


def _gfb(ts, m: int) -> bool:
    """Goossens, Funk & Baruah (RTS 2003) for implicit deadlines, exactly: U <= m - (m - 1) u_max."""
    us = [Fraction(t.wcet, t.period) for t in ts]
    return sum(us) <= m - (m - 1) * max(us)


def test_the_example_runs_end_to_end(example, tmp_path):
    mod, path = example
    assert isinstance(mod, Reproduction)
    spec = mod.parse(path.read_text(encoding="utf-8"), str(path), quick=True)
    assert [p.coords for p in spec.points] == [{"m": m, "util_frac": f} for m in (2, 4) for f in (0.3, 0.5, 0.7)]
    out = tmp_path / "results"
    run = run_sweep(spec, out, jobs=1, progress=False)
    assert len(run.computed) == 6
    rep = report(mod, spec, out, run)
    for key, name in (("figure", "gfb-demo.png"), ("csv", "gfb-demo.csv"), ("tables", "gfb-demo.md")):
        assert rep[key] == out / name and rep[key].stat().st_size > 0
    assert rep["text"].startswith("gfb-demo") and "| m | U/m | accepted |" in rep["text"]
    # The fractions are the test's verdicts on the point's sets, recomputed here exactly.
    for m, f, frac in rep["result"]["rows"]:
        p = next(p.params for p in spec.points if p.coords == {"m": m, "util_frac": f})
        sets = generate(2 * m, f * m, seed=p["seed"], count=p["count"], m=m)
        assert frac == sum(_gfb(ts, m) for ts in sets) / len(sets)
    assert any(0 < r[2] for r in rep["result"]["rows"]) and any(r[2] < 1 for r in rep["result"]["rows"])
    again = run_sweep(spec, out, jobs=1, progress=False, resume=True)
    assert not again.computed and len(again.kept) == 6


def test_the_example_spec_is_declared(example):
    mod, path = example
    text = path.read_text(encoding="utf-8")
    for edited, msg in (
        ("util_fraction = [0.3, 0.5, 0.7]", "unknown key 'util_fraction' in the top level"),
        ('util_frac = "half"', "util_frac: expected a list of numbers, got 'half'"),
        ("", None),
    ):
        if msg is None:  # unedited: parses
            assert mod.parse(text, str(path)).points
            continue
        with pytest.raises(SpecError, match=re.escape(msg)):
            mod.parse(text.replace("util_frac = [0.3, 0.5, 0.7]", edited), str(path))
