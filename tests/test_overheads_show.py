"""Overhead models beyond their measured range and `rtsched overheads show` (docs/overheads.md,
"Within and beyond the measured range"): the per-term rules (averages flat and never scaled with
m, maxima of contended terms along their least-squares trend and scaled with m), the report that
says how each verdict extrapolated, the description and its drawing, and the `paper` model set
built from the published numbers of Cerqueira, Vanga & Brandenburg, RTAS 2014."""

import json

import pytest
import rtsched
from rtsched.cli.overheads import describe
from rtsched.shipped import DATA

PAPER = DATA / "paper"

#: A model of gedf-mp on 2 processors whose last segment jumps: the least-squares trend over all
#: points is far below the last segment's slope.
MODEL = {
    "format": "rtsched-overhead-model",
    "version": 1,
    "scheduler": "gedf-mp",
    "m": 2,
    "protocol": {"filter": "samples overlapping a poll gap are discarded", "background": "none"},
    "terms": {
        # Δreq (contended for G-EDF-MP): maxima 100 µs ... with a jump at the last point.
        "request": {
            "n": [2, 4, 6, 8, 10],
            "avg_ns": [27_000, 27_500, 26_800, 27_200, 28_000],
            "max_ns": [100_000, 100_000, 100_000, 100_000, 300_000],
            "count": [1000, 2000, 3000, 4000, 5000],
            "p99_ns": [50_000, 50_000, 50_000, 50_000, 60_000],
            "max_raw_ns": [900_000, 100_000, 100_000, 100_000, 300_000],
            "discarded": [3, 0, 1, 0, 2],
            "outliers": [1, 0, 0, 0, 0],
        },
        # Δsch (not contended for G-EDF-MP): held beyond n.
        "schedule": {"n": [2, 10], "avg_ns": [1000, 2000], "max_ns": [10_000, 20_000]},
    },
}


def test_averages_are_never_scaled_and_contended_maxima_follow_the_fit():
    ts = rtsched.TaskSet([rtsched.Task(wcet="1ms", period="100ms") for _ in range(20)])
    o = rtsched.analyze(ts, m=8, tests=["gedf"], overheads=MODEL, mechanism="gedf-mp", extrapolate=True)["overheads"]
    # Averages: the last measured value (28 µs), not × 7/2 and not continued (RTAS 2014 §IV-B).
    assert o["soft"]["values"]["request_ns"] == 28_000
    assert o["soft"]["values"]["schedule_ns"] == 2000
    # Maxima of Δreq: the least-squares slope over all points, computed exactly:
    # x = 2..10 step 2, y = 100k ×4, 300k: slope = (5·Σxy − Σx·Σy) / (5·Σx² − (Σx)²)
    xs, ys = [2, 4, 6, 8, 10], [100_000] * 4 + [300_000]
    num = 5 * sum(x * y for x, y in zip(xs, ys, strict=True)) - sum(xs) * sum(ys)
    den = 5 * sum(x * x for x in xs) - sum(xs) ** 2
    beyond = 300_000 + -(-num * (20 - 10) // den)  # ceil
    capacity = 7  # m − 1 with the DSP
    assert o["hard"]["values"]["request_ns"] == -(-beyond * capacity // 2)
    # The last segment would have given 300k + 100k/task · 10: far more.
    assert o["hard"]["values"]["request_ns"] < (300_000 + 1_000_000) * capacity // 2
    # Δsch is not contended for G-EDF-MP: held, not scaled.
    assert o["hard"]["values"]["schedule_ns"] == 20_000
    # The report says how, per term, and in the notes.
    ext = {e["term"]: e for e in o["hard"]["extrapolation"]}
    assert ext["request"]["beyond"] == "trend" and ext["request"]["m_scale"] == [7, 2]
    assert ext["request"]["slope_ns_per_task"] == pytest.approx(num / den)
    assert ext["schedule"]["beyond"] == "flat" and ext["schedule"]["m_scale"] is None
    assert all(e["beyond"] == "flat" and e["m_scale"] is None for e in o["soft"]["extrapolation"])
    notes = " ".join(o["notes"])
    assert "averages are not scaled" in notes and "least-squares trend" in notes and "Δreq" in notes
    # Without --extrapolate nothing is scaled or continued, and the report says n is beyond.
    o = rtsched.analyze(ts, m=8, tests=["gedf"], overheads=MODEL, mechanism="gedf-mp")["overheads"]
    assert o["hard"]["values"]["request_ns"] == 300_000 and o["hard"]["extrapolation"] is None
    assert any("beyond the measured n" in n and "held" in n for n in o["notes"])


def test_describe_shows_points_filter_counts_trends_and_rules():
    d = describe(MODEL, m=8, n=40)
    assert d["mechanism"] == "gedf-mp" and d["analysed_m"] == 8 and d["max_n"] == 10
    assert d["protocol"]["background"] == "none"
    req = next(t for t in d["terms"] if t["term"] == "request")
    assert req["contended"] and req["discarded"] == [3, 0, 1, 0, 2] and req["outliers"][0] == 1
    assert req["max_raw_ns"][0] == 900_000 and req["p99_ns"][-1] == 60_000
    assert req["rule"]["max"] == {"beyond": "trend", "m_scale": [7, 2]}
    assert req["rule"]["avg"] == {"beyond": "flat", "m_scale": None}
    # The curves are the analysis's values: at n = 40 the same number analyze charges.
    grid = d["grid_n"]
    assert grid[-1] == 40 and all(n in grid for n in MODEL["terms"]["request"]["n"])
    ts = rtsched.TaskSet([rtsched.Task(wcet="1ms", period="100ms") for _ in range(40)])
    o = rtsched.analyze(ts, m=8, tests=["gedf"], overheads=MODEL, mechanism="gedf-mp", extrapolate=True)["overheads"]
    assert req["curve"]["max_ns"][-1] == o["hard"]["values"]["request_ns"]
    assert req["curve"]["avg_ns"][-1] == o["soft"]["values"]["request_ns"]
    sch = next(t for t in d["terms"] if t["term"] == "schedule")
    assert not sch["contended"] and sch["rule"]["max"]["beyond"] == "flat"


def test_cli_show_table_json_plot_and_errors(tmp_path, cli):
    p = tmp_path / "model.json"
    p.write_text(json.dumps(MODEL))
    code, out, err = cli("overheads", "show", p, "--m", "8")
    assert code == 0, err
    for words in ("request (Δreq", "contended", "discarded", "max raw", "trend +", "× 7/2", "held at the last value"):
        assert words in out, (words, out)
    code, out, err = cli("overheads", "show", p, "--json", "--plot", tmp_path / "m.png")
    assert code == 0, err
    assert {t["term"] for t in json.loads(out)["terms"]} == {"schedule", "request"}
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"
    # Bad input: one line naming the file and field, exit 2, no traceback.
    bad = dict(MODEL, terms={"request": dict(MODEL["terms"]["request"], discarded=[1])})
    q = tmp_path / "bad.json"
    q.write_text(json.dumps(bad))
    for args, words in (
        ((q,), "terms.request.discarded"),
        ((p, "--mechanism", "nope"), "unknown mechanism"),
        ((p, "--m", "1"), "needs at least 2 processors"),
        ((p, "--plot", tmp_path / "x.bmp"), ".png, .svg or .pdf"),
        ((tmp_path / "missing.json",), "missing.json"),
    ):
        code, _, err = cli("overheads", "show", *args)
        assert code == 2 and words in err and "Traceback" not in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err
    # Shipped models by name, from any folder: one file, and a file of the `paper` set.
    for name, sched in (("overheads-gedf-mp-2cpu", "gedf-mp"), ("paper/overheads-push-pull.json", "push-pull")):
        code, out, err = cli("overheads", "show", name, "--json")
        assert code == 0 and json.loads(out)["scheduler"] == sched, err
    code, _, err = cli("overheads", "show", "paper")
    assert code == 2 and "a folder of models" in err, err


@pytest.mark.parametrize("name", ["gsn-edf", "gsn-edf-di", "push-pull", "gedf-mp"])
def test_paper_models_carry_their_provenance(name):
    """Every value of a `paper` model is one the paper's text states, with the section it comes
    from; nothing else is in the model (unstated terms are listed, charged as 0)."""
    text = (PAPER / f"overheads-{name}.json").read_text()
    model = json.loads(text)
    d = describe(model)
    assert d["scheduler"] == name and d["m"] in (63, 64)
    prov = model["provenance"]
    assert "RTAS 2014" in prov["source"]
    for t in model["terms"]:
        for stat in ("avg_ns", "max_ns"):
            key = f"{t}.{stat}"
            assert key in prov["values"] and "§" in prov["values"][key], key
    assert set(prov["not_stated"]).isdisjoint(model["terms"])
    # The report names what is charged as 0.
    ts = rtsched.TaskSet([rtsched.Task(wcet="1ms", period="100ms") for _ in range(100)])
    o = rtsched.analyze(ts, m=64, tests=["gedf"], overheads=model, mechanism=name)["overheads"]
    assert any("charged as 0" in n and "context_switch" in n for n in o["notes"])


def test_paper_models_state_the_published_scheduling_maxima():
    """RTAS 2014 §IV-B: maximum Δsch at 64 cores, GSN-EDF 2759.04 µs, SD 4337.55 µs, G-EDF-MP
    119.37 µs — G-EDF-MP 23× and 36× lower."""
    mx = {
        n: json.loads((PAPER / f"overheads-{n}.json").read_text())["terms"]["schedule"]["max_ns"][0]
        for n in ("gsn-edf", "push-pull", "gedf-mp")
    }
    assert mx == {"gsn-edf": 2_759_040, "push-pull": 4_337_550, "gedf-mp": 119_370}
    assert round(mx["gsn-edf"] / mx["gedf-mp"]) == 23 and round(mx["push-pull"] / mx["gedf-mp"]) == 36


def test_global_lock_averages_scale_with_m_but_stay_flat_in_n():
    """GSN-EDF's one lock: its average Δrel and Δsch grow with m too (RTAS 2014 §II-B, Fig. 1);
    the uncontended Δcxs does not; beyond the measured n every average is held."""
    model = {
        "format": "rtsched-overhead-model",
        "version": 1,
        "scheduler": "gsn-edf",
        "m": 2,
        "terms": {
            "release": {"n": [2, 4], "avg_ns": [1000, 1500], "max_ns": [10_000, 20_000]},
            "context_switch": {"n": [2, 4], "avg_ns": [300, 400], "max_ns": [900, 1000]},
        },
    }
    ts = rtsched.TaskSet([rtsched.Task(wcet="1ms", period="100ms") for _ in range(40)])
    o = rtsched.analyze(ts, m=8, tests=["gedf"], overheads=model, mechanism="gsn-edf", extrapolate=True)["overheads"]
    assert o["soft"]["values"]["release_ns"] == 1500 * 8 // 2  # held at n = 4, × 8/2
    assert o["soft"]["values"]["context_switch_ns"] == 400
    ext = {e["term"]: e for e in o["soft"]["extrapolation"]}
    assert ext["release"]["beyond"] == "flat" and ext["release"]["m_scale"] == [8, 2]
    assert any("and so are their averages" in n for n in o["notes"])
    assert next(m for m in rtsched.overheads.mechanisms() if m["name"] == "gsn-edf")["averages_contended"]
    assert not next(m for m in rtsched.overheads.mechanisms() if m["name"] == "gedf-mp")["averages_contended"]


#: A model of RUN with its count term: tree_events counts reduction-tree events per callback.
RUN_MODEL = {
    "format": "rtsched-overhead-model",
    "version": 1,
    "scheduler": "run",
    "m": 2,
    "terms": {
        "budget_timer": {"n": [2, 4], "avg_ns": [3000, 5000], "max_ns": [7000, 9000]},
        "tree_events": {
            "n": [2, 4],
            "avg_ns": [3, 5],
            "max_ns": [7, 9],
            "count": [100, 200],
            "p50_ns": [3, 4],
            "p99_ns": [6, 8],
            "max_raw_ns": [7, 12],
            "discarded": [0, 0],
            "outliers": [0, 1],
        },
    },
}


def _term_block(text: str, term: str) -> list[str]:
    lines = text.splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith(f"{term} ("))
    block = []
    for x in lines[i + 1 :]:
        if not x.strip():
            break
        block.append(x)
    return block


def test_show_prints_a_count_term_as_counts(tmp_path, cli):
    # RUN's tree_events is a count (kind "count" in the vocabulary): its columns are numbers of
    # events, never times; the time term beside it keeps its unit.
    p = tmp_path / "run.json"
    p.write_text(json.dumps(RUN_MODEL))
    code, out, err = cli("overheads", "show", p)
    assert code == 0, err
    counts = _term_block(out, "tree_events")
    assert counts[1].split() == ["2", "100", "0", "0", "3", "3", "6", "7", "7"], out
    assert counts[2].split() == ["4", "200", "0", "1", "5", "4", "8", "9", "12"], out
    assert not any(u in x for x in counts for u in ("ns", "µs", "ms")), out
    assert "fitted slope 1.0 per task" in out
    times = _term_block(out, "budget_timer")
    assert "3 µs" in times[1] and "7 µs" in times[1] and "ns/task" in times[3], out


def test_plots_draw_a_count_term_as_counts(monkeypatch, tmp_path):
    # `overheads show --plot`: the count term's axis is counts, its points undivided; the
    # measure-overheads figures (µs) leave the count term out.
    import rtsched.output
    import rtsched.runtime
    from rtsched.cli.overheads import plot

    figs = []
    monkeypatch.setattr(rtsched.output, "save_figure", lambda fig, path, **kw: figs.append(fig))
    monkeypatch.setattr(rtsched.runtime, "save_figure", lambda fig, path, **kw: figs.append(fig))
    plot(describe(RUN_MODEL), str(tmp_path / "m.png"))
    axes = {ax.get_title(): ax for ax in figs[0].axes if ax.get_title()}
    tree = next(ax for t, ax in axes.items() if t.startswith("tree_events"))
    bt = next(ax for t, ax in axes.items() if t.startswith("budget_timer"))
    assert tree.get_ylabel() == "count" and bt.get_ylabel() == "µs"
    assert max(y for line in tree.get_lines() for y in line.get_ydata()) == 12  # max raw, a count
    rtsched.runtime._plot(RUN_MODEL, "max", str(tmp_path / "r.png"))
    labels = [line.get_label() for line in figs[1].axes[0].get_lines()]
    assert labels == ["budget_timer"]


def test_run_summary_and_compare_print_counts_as_counts():
    from rtsched.campaign import compare_lines
    from rtsched.runtime import format_summary

    st = {"count": 10, "avg_ns": 2.5, "p50_ns": 2, "p99_ns": 4, "max_ns": 5, "max_raw_ns": 9, "discarded": 1}
    sch = dict(st, avg_ns=2500.0, p50_ns=2000, p99_ns=4000, max_ns=5000, max_raw_ns=9000)
    text = format_summary({"scheduler": "run", "cpus": [0], "overheads": {"tree_events": st, "schedule": sch}})
    tree = next(x for x in text.splitlines() if x.strip().startswith("tree_events"))
    assert "avg 2.50, p50 2, p99 4, max 5 (a count, not a time)" in tree and "raw max 9)" in tree, tree
    assert not any(u in tree for u in (" ns", "µs")), tree
    line = next(x for x in text.splitlines() if x.strip().startswith("schedule"))
    assert "avg 2.5 µs" in line or "avg 2500 ns" in line, line
    worst = {"model": "overheads-run.json", "term": "tree_events", "n": 4, "a_ns": 7.0, "b_ns": 9.0}
    c = {"models": 1, "a": "A", "b": "B", "only_in_a": [], "only_in_b": [], "stats": {}}
    c["stats"]["max_ns"] = {"points": 1, "median": 1.29, "p90": 1.29, "max": 1.29, "worst": worst, "zero_in_one": 0}
    text = "\n".join(compare_lines(c))
    assert "tree_events n=4: 7 vs 9 (a count)" in text, text
    c["stats"]["max_ns"]["worst"] = dict(worst, term="schedule")
    assert "schedule n=4: 7 vs 9 ns" in "\n".join(compare_lines(c))


def test_a_mechanisms_own_count_term_prints_as_a_count():
    # push/pull's push_failure (attempts made by an abandoned push) is no vocabulary term; the
    # runtime's registry marks it a count, and the run table prints it as one.
    import json

    from rtsched import _core
    from rtsched.overheads import count_terms
    from rtsched.runtime import format_summary

    terms = {t["name"]: t for e in json.loads(_core.mechanisms()) for t in e["terms"]}
    assert terms["push_failure"]["count"] and terms["tree_events"]["count"] and not terms["schedule"]["count"]
    assert {"push_failure", "tree_events"} <= count_terms() and "schedule" not in count_terms()
    st = {"count": 3, "avg_ns": 4.0, "p50_ns": 4, "p99_ns": 4, "max_ns": 4}
    text = format_summary({"scheduler": "push-pull", "cpus": [0], "overheads": {"push_failure": st}})
    line = next(x for x in text.splitlines() if x.strip().startswith("push_failure"))
    assert "(a count, not a time)" in line and not any(u in line for u in (" ns", "µs")), line
