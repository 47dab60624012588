"""The push/pull cost reproduction (`rtsched reproduce sd-push-cost`, Lelli et al., OSPERT 2011,
Figs. 8-11) in its two forms — (a) the structures alone, replayed; (b) real threads contending —
and its binding `push_pull_costs`: a tiny run's files, the registered spec's grid, bad inputs. No
timing is asserted: only counts, the order of the statistics, structure and files."""

import csv
import json
import os

import pytest
import rtsched
from rtsched import _core
from rtsched.experiments import cli as exp_cli
from rtsched.experiments.registry import available, load_experiment, lookup, parse_experiment, reproduce
from rtsched.experiments.spec import SpecError

TINY = {"form": "a", "samples": 2, "horizon": "200ms", "grid": {"m": [2, 4], "load": [0.6, 0.8]}}
#: Both forms, small: form (b) at normal priority (the machine is shared), 0.5 s per variant.
TINY_BOTH = {"form": "both", "rt_priority": 0, "samples": 1, "horizon": "500ms", "grid": {"m": [2], "load": [0.6, 0.8]}}
VARIANTS = ("linear", "fmask", "cpudl", "cpupri")
OPS = ("push", "pull", "enqueue", "dequeue")
TABLE = ["form", "variant", "m", "load", "operation", "count", "discarded", "outliers", "p50_ns", "avg_ns", "p99_ns"]
TABLE += ["max_ns"]


def test_registered_spec_is_the_papers_setup():
    assert "sd-push-cost" in available()
    s = load_experiment(lookup("sd-push-cost"))
    pts = [p.params for p in s.points]
    assert {p["m"] for p in pts} == {2, 4, 8, 16, 24, 32, 40, 48, 64}
    assert {p["load"] for p in pts} == {0.6, 0.7, 0.8}
    assert {p["horizon"] for p in pts} == {10 * 10**9}
    # Form (a) at every m; form (b), one set on real threads, at the m that fit this machine.
    a = [p for p in pts if p.get("form") != "b"]
    b = [p for p in pts if p.get("form") == "b"]
    assert {p["sets"] for p in a} == {20} and len(a) == 27
    assert {p["m"] for p in b} == {m for m in (2, 4, 8, 16, 24, 32, 40, 48, 64) if m <= len(os.sched_getaffinity(0))}
    assert all(p["sets"] == 1 and p["rt_priority"] == 50 for p in b)


def test_tiny_run_writes_the_table_and_the_four_panels(tmp_path):
    res = reproduce("sd-push-cost", quick=True, out=tmp_path / "o", jobs=1, progress=False, override=TINY)
    with open(tmp_path / "o" / "table.csv") as f:
        rows = list(csv.DictReader(f))
    # A quick run carries the quick column (quickmark.py) after the table's own.
    assert list(rows[0]) == [*TABLE, "quick"]
    assert {r["quick"] for r in rows} == {"true"} and {r["form"] for r in rows} == {"a"}
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


def _num(x):
    return float(x.replace(",", "")) if x else None


def test_quick_run_in_both_forms_has_consistent_statistics(tmp_path):
    """--quick in both forms (form (b): real threads on this machine's CPUs): every row of the
    table has samples, and its statistics are ordered — median <= p99 <= max, the outlier rule
    removes at most 1 %, form (b) counts what the interference filter discarded."""
    res = reproduce("sd-push-cost", quick=True, out=tmp_path / "o", jobs=1, progress=False, override=TINY_BOTH)
    with open(tmp_path / "o" / "table.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == [*TABLE, "quick"]
    keys = {(r["form"], r["variant"], r["m"], r["load"], r["operation"]) for r in rows}
    assert keys == {(f, v, "2", load, op) for f in "ab" for v in VARIANTS for load in ("0.6", "0.8") for op in OPS}
    for r in rows:
        count, outliers = int(r["count"]), int(r["outliers"])
        p50, p99, mx, avg = (_num(r[k]) for k in ("p50_ns", "p99_ns", "max_ns", "avg_ns"))
        assert count > 0, r
        assert 0 <= outliers <= count // 100, r
        assert 0 <= p50 <= p99 <= mx, r
        assert avg is not None and avg >= 0, r
        if r["form"] == "a":
            assert r["discarded"] == "" and avg <= mx, r  # the mean of the samples the rule keeps
        else:
            assert int(r["discarded"]) >= 0, r
    full = {(r["form"], r["variant"], r["load"], r["operation"]): r for r in csv.DictReader(open(res["csv"]))}
    for (form, v, load, op), r in full.items():
        if form == "b":
            # One run per variant on the first two CPUs; its priority as asked (0: normal).
            assert r["cpus"] == ",".join(map(str, sorted(os.sched_getaffinity(0))[:2])) and r["rt_priority"] == ""
            assert r["trustworthy"] in ("True", "False") and r["p50_cycles"] == ""
        else:
            assert int(r["p50_cycles"]) <= int(r["p99_cycles"]) <= int(r["max_cycles"]), (v, load, op)
    for title in ("Form (a)", "Form (b)", "form (b) push: median ns", "form (b) over form (a), push medians"):
        assert title in res["text"], title


def test_form_option_and_its_bad_values(capsys):
    text = lookup("sd-push-cost").read_text()
    cpus = len(os.sched_getaffinity(0))
    only_b = parse_experiment(text, "x", override={"form": "b", "grid": {"m": [1, cpus + 1]}}, name="sd-push-cost")
    assert [(p.params["form"], p.params["m"]) for p in only_b.points] == [("b", 1)] * 3
    only_a = parse_experiment(text, "x", override={"form": "a"}, name="sd-push-cost")
    assert all("form" not in p.params for p in only_a.points)
    # Each form other than the default has its own results folder (one folder holds one spec's points).
    from rtsched.experiments.registry import default_out, module

    mod = module("sd-push-cost")
    both = parse_experiment(text, "x", quick=True, name="sd-push-cost")
    assert str(default_out("sd-push-cost", mod, both, True)) == "results/sd-push-cost-quick"
    assert str(default_out("sd-push-cost", mod, only_b, False)) == "results/sd-push-cost-form-b"
    assert str(default_out("sd-push-cost", mod, only_a, True)) == "results/sd-push-cost-form-a-quick"
    with pytest.raises(SpecError, match=r"form: form \(b\) runs one thread per CPU: no m of the grid"):
        parse_experiment(text, "x", override={"form": "b", "grid": {"m": [cpus + 1]}}, name="sd-push-cost")
    with pytest.raises(SpecError, match="form.*one of 'a', 'b', 'both'"):
        parse_experiment(text, "x", override={"form": "c"}, name="sd-push-cost")
    with pytest.raises(SpecError, match="rt_priority"):
        parse_experiment(text, "x", override={"rt_priority": -1}, name="sd-push-cost")
    # The option belongs to sd-push-cost alone; a bad value is argparse's one-line refusal.
    assert exp_cli.main(["reproduce", "spres-fig4", "--form", "b", "--out", "/nonexistent/x"]) == 2
    err = capsys.readouterr().err
    assert "--form applies to sd-push-cost" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit):
        exp_cli.main(["reproduce", "sd-push-cost", "--form", "c"])
    assert "invalid choice: 'c'" in capsys.readouterr().err


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
