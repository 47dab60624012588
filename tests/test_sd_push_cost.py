"""The push/pull cost reproduction (`rtsched reproduce sd-push-cost`, Lelli et al., OSPERT 2011,
Figs. 8-11) and its binding `push_pull_costs`: a tiny run's files, the registered spec's grid,
bad inputs. No timing is asserted: only counts, structure and files."""

import csv
import json

import pytest
import rtsched
from rtsched import _core
from rtsched.experiments.registry import available, load_experiment, lookup, parse_experiment, reproduce
from rtsched.experiments.spec import SpecError

TINY = {"samples": 2, "horizon": "200ms", "grid": {"m": [2, 4], "load": [0.6, 0.8]}}


def test_registered_spec_is_the_papers_setup():
    assert "sd-push-cost" in available()
    s = load_experiment(lookup("sd-push-cost"))
    pts = [p.params for p in s.points]
    assert {p["m"] for p in pts} == {2, 4, 8, 16, 24, 32, 40, 48, 64}
    assert {p["load"] for p in pts} == {0.6, 0.7, 0.8}
    assert {p["sets"] for p in pts} == {20} and {p["horizon"] for p in pts} == {10 * 10**9}


def test_tiny_run_writes_the_table_and_the_four_panels(tmp_path):
    res = reproduce("sd-push-cost", quick=True, out=tmp_path / "o", jobs=1, progress=False, override=TINY)
    with open(tmp_path / "o" / "table.csv") as f:
        rows = list(csv.DictReader(f))
    # A quick run carries the quick column (quickmark.py) after the table's own.
    assert list(rows[0]) == ["variant", "m", "load", "operation", "p50_ns", "avg_ns", "p99_ns", "outliers", "quick"]
    assert {r["quick"] for r in rows} == {"true"}
    keys = {(r["variant"], r["m"], r["load"], r["operation"]) for r in rows}
    assert keys == {
        (v, str(m), str(load), op)
        for v in ("linear", "fmask", "cpudl", "cpupri")
        for m in (2, 4)
        for load in (0.6, 0.8)
        for op in ("push", "pull", "enqueue", "dequeue")
    }
    cell = res["result"]["cell"]
    # The EDF variants replay one recording: the same number of each operation.
    for m in (2, 4):
        for load in (0.6, 0.8):
            for op in ("push", "pull", "enqueue", "dequeue"):
                counts = {cell[(v, m, load, op)]["count"] for v in ("linear", "fmask", "cpudl")}
                assert len(counts) == 1, (m, load, op, counts)
            assert cell[("linear", m, load, "enqueue")]["count"] > 0
            # Robust statistics: ordered, the rule removes at most 1 % (docs/overheads.md).
            for v in ("linear", "fmask", "cpudl", "cpupri"):
                for op in ("push", "pull", "enqueue", "dequeue"):
                    r = cell[(v, m, load, op)]
                    assert r["outliers"] <= r["count"] // 100, (v, m, load, op)
                    if r["count"]:
                        assert r["p50_cycles"] <= r["p99_cycles"] <= r["max_cycles"], (v, m, load, op)
                        assert r["avg_cycles"] <= r["max_cycles"] and r["avg_cycles"] <= r["avg_raw_cycles"] + 1e-9
            assert cell[("cpupri", m, load, "enqueue")]["count"] > 0
    assert res["figure"].exists() and res["figure"].stat().st_size > 0
    for title in ("push, load 0.6", "enqueue, load 0.8", "The paper's claims beside ours"):
        assert title in res["text"]


def test_binding_rejects_bad_input():
    ts = rtsched.generate(6, 1.2, seed=1)
    with pytest.raises(rtsched.RtschedError, match="field 'm'"):
        _core.push_pull_costs([ts], 0, 10**8)
    with pytest.raises(rtsched.RtschedError, match="field 'horizon'"):
        _core.push_pull_costs([ts], 2, 0)
    with pytest.raises(rtsched.RtschedError, match="field 'variants'.*known"):
        _core.push_pull_costs([ts], 2, 10**8, ["heap"])
    with pytest.raises(rtsched.RtschedError, match="calls"):
        _core.push_pull_costs([ts], 2, 10**9, ["linear"], 10)
    rows = json.loads(_core.push_pull_costs([ts], 2, 10**8, ["cpudl"]))
    assert [r["operation"] for r in rows] == ["push", "pull", "enqueue", "dequeue"]


def test_bad_specs_have_clear_errors():
    text = lookup("sd-push-cost").read_text()
    with pytest.raises(SpecError, match="find_cpu"):
        parse_experiment(text.replace('find_cpu = ["linear", "fmask", "cpudl", "cpupri"]', 'find_cpu = ["heap"]'), "x")
    with pytest.raises(SpecError, match="load"):
        parse_experiment(text.replace("load = [0.6, 0.7, 0.8]", "load = [1.5]"), "x")
