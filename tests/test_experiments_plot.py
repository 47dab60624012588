"""Plots, CSV summaries, the CLI commands and the registry's reproduce, on the fake evaluator."""

import csv
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from rtsched.experiments import cli, run_sweep, store
from rtsched.experiments.plot import plot_results
from rtsched.experiments.registry import reproduce
from rtsched.experiments.spec import SpecError, parse_spec
from rtsched.experiments.testing import fake_evaluate

SPEC = """
name = "p"
samples = 30
seed = 11
methods = ["ffd", "wfd", "ffd-c=d", "spres", "giveup-a"]
[generator]
periods = "seed004"
[grid]
m = [4]
n = ["m+1", "2m"]
util = [{ from = 2.0, to = 4.0, step = 0.25 }]
[plot]
title = "test figure"
panels = "group"
curves = "n"
[plot.groups]
"partitioning" = ["ffd", "wfd"]
"semi" = ["ffd", "wfd", "ffd-c=d"]
"gives up" = ["giveup-a"]
[plot.panel_xlim]
"semi" = [3.0, 4.05]
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("plot") / "r"
    spec = parse_spec(SPEC, "p.toml")
    run_sweep(spec, out, evaluator=fake_evaluate, jobs=1, progress=False)
    return spec, out


def test_png_svg_pdf_are_written(results, tmp_path):
    spec, out = results
    png = plot_results(out, tmp_path / "f.png")
    data = Path(png["figure"]).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    svg = plot_results(out, tmp_path / "f.svg")["figure"].read_text()
    assert "<svg" in svg and "test figure" in svg and "n = 5" in svg and "n = 8" in svg
    assert "(c) gives up" in svg
    assert plot_results(out, tmp_path / "f.pdf")["figure"].read_bytes()[:4] == b"%PDF"
    with pytest.raises(SpecError, match="must end in .png, .pdf or .svg"):
        plot_results(out, tmp_path / "f.jpg")


def test_csv_summary_matches_an_independent_count(results, tmp_path):
    spec, out = results
    res = plot_results(out, tmp_path / "f.png")
    rows = list(csv.DictReader(open(res["csv"])))
    groups = spec.plot.groups
    assert len(rows) == len(spec.points) * (len(spec.methods) + len(groups))
    by = {(r["point"], r["kind"], r["name"]): r for r in rows}
    for p in spec.points:
        t = pq.read_table(store.point_path(out, p)).to_pylist()
        for label, members in groups.items():
            placed = {}
            for row in t:  # any member placed it; the rate is the first member's (in group order) that did
                if row["method"] in members and row["schedulable"]:
                    prev = placed.get(row["set"])
                    if prev is None or members.index(row["method"]) < prev[0]:
                        placed[row["set"]] = (members.index(row["method"]), row["switch_rate"])
            r = by[(p.id, "group", label)]
            assert int(r["schedulable"]) == len(placed) and int(r["sets"]) == p.count
            assert float(r["fraction_schedulable"]) == pytest.approx(len(placed) / p.count)
            if placed:
                mean = sum(v for _, v in placed.values()) / len(placed)
                assert float(r["mean_switch_rate"]) == pytest.approx(mean, rel=1e-5)
            else:
                assert r["mean_switch_rate"] == ""
        r = by[(p.id, "group", "gives up")]
        assert int(r["gave_up"]) == p.count and int(r["schedulable"]) == 0
        for mt in spec.methods:
            r = by[(p.id, "method", mt)]
            assert int(r["schedulable"]) == sum(1 for row in t if row["method"] == mt and row["schedulable"])


def test_switch_rate_plot_and_missing_points_are_noted(results, tmp_path):
    spec, out = results
    text = SPEC.replace('curves = "n"', 'curves = "n"\ny = "switch_rate"\nmin_samples = 5')
    d = tmp_path / "r"
    run_sweep(parse_spec(text, "p.toml"), d, evaluator=fake_evaluate, jobs=1, progress=False)
    victim = sorted((d / "points").glob("*.parquet"))[0]
    victim.unlink()
    res = plot_results(d, tmp_path / "rate.svg")
    assert "context switches" in res["figure"].read_text()
    assert res["points"] == len(spec.points) - 1
    assert any("1 of 18 points have no results" in n for n in res["notes"])


def test_cli_sweep_plot_and_errors(tmp_path, capsys, monkeypatch):
    spec_path = tmp_path / "s.toml"
    spec_path.write_text(SPEC.replace("sampels", "samples"))
    bad = tmp_path / "bad.toml"
    bad.write_text(SPEC.replace("samples = 30", "sampels = 30"))

    def run(*argv):
        return cli.main([str(a) for a in argv])

    assert run("sweep", bad, "--out", tmp_path / "x") == 2
    assert "unknown key 'sampels'" in capsys.readouterr().err
    # the default evaluator is the Rust core: the CLI needs it (or says clearly that it is missing)
    from rtsched.experiments import evaluate

    if not evaluate.has_core_evaluator():
        assert run("sweep", spec_path, "--out", tmp_path / "r", "--jobs", "1") == 2
        assert "no evaluate_point" in capsys.readouterr().err
    monkeypatch.setattr(evaluate, "evaluate_point", fake_evaluate)
    monkeypatch.setattr(evaluate, "core_evaluator", lambda: fake_evaluate)
    assert run("sweep", spec_path, "--out", tmp_path / "r", "--jobs", "1", "--quiet") == 0
    assert "18 point(s) computed" in capsys.readouterr().out
    assert run("sweep", spec_path, "--out", tmp_path / "r", "--jobs", "1", "--resume", "--quiet") == 0
    assert "0 point(s) computed, 18 kept" in capsys.readouterr().out
    assert run("sweep", spec_path, "--out", tmp_path / "r", "--dask", "tcp://x:1", "--slurm") == 2
    assert "either --dask or --slurm" in capsys.readouterr().err
    assert run("sweep", spec_path, "--out", tmp_path / "r", "--slurm-opt", "cores=2") == 2
    assert "need --slurm" in capsys.readouterr().err
    assert run("plot", tmp_path / "r", "-o", tmp_path / "fig.png") == 0
    assert (tmp_path / "fig.png").stat().st_size > 0 and (tmp_path / "fig.csv").stat().st_size > 0
    assert run("plot", tmp_path / "nothing", "-o", tmp_path / "fig.png") == 2
    assert "not a results directory" in capsys.readouterr().err
    assert run("reproduce", "spres-fig99") == 2
    err = capsys.readouterr().err
    assert "unknown experiment 'spres-fig99'" in err and "spres-fig3" in err
    assert run("reproduce", "--list") == 0
    assert "spres-fig6" in capsys.readouterr().out


def test_reproduce_quick_with_the_fake(tmp_path):
    res = reproduce("spres-fig5", quick=True, out=tmp_path / "f5", evaluator=fake_evaluate, jobs=1, progress=False)
    assert res["figure"] == tmp_path / "f5" / "spres-fig5.png" and res["figure"].stat().st_size > 0
    assert res["points"] == res["total"] == len(res["sweep"].computed)
    again = reproduce(
        "spres-fig5", quick=True, resume=True, out=tmp_path / "f5", evaluator=fake_evaluate, jobs=1, progress=False
    )
    assert not again["sweep"].computed and len(again["sweep"].kept) == res["total"]
    rows = list(csv.DictReader(open(res["csv"])))
    assert {r["epsilon_ns"] for r in rows} == {"100000", "500000", "2000000"}
    # The figure's numbers and the crossings of every curve beside it.
    table = list(csv.DictReader(open(res["table"])))
    assert table and set(table[0]) == {"panel", "curve", "x", "value", "sets", "quick"}  # a quick run
    assert {r["curve"] for r in table} == {"ε = 100 µs", "ε = 500 µs", "ε = 2000 µs"}
    assert all(0 <= float(r["value"]) <= 1 for r in table)
    cross = list(csv.DictReader(open(tmp_path / "f5" / "crossings.csv")))
    assert len(cross) == 9 and all(r["m"] == "8" for r in cross)
    assert all(not math.isnan(float(r["fraction_schedulable"])) for r in rows)
