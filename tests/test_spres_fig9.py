"""`rtsched reproduce spres-fig9` (Brandenburg & Gül, RTSS 2016, Fig. 9 and §VII-B on real
threads): the integral-millisecond sets RUN and QPS take (whole-ms WCETs, U ≤ m exact, refusals),
the spec and its refusals, the weighted p99, the report with a scheduler this build lacks (named
as missing, never dropped), and a tiny run end to end (50 ms per run, normal priority). No
timing is asserted."""

import os
from fractions import Fraction

import pyarrow as pa
import pytest
import rtsched
from rtsched.experiments.registry import available, load_experiment, lookup, parse_experiment, reproduce
from rtsched.experiments.repro import spres_fig9 as f9
from rtsched.experiments.spec import SpecError
from rtsched.experiments.sweep import load_tables
from rtsched.runtime import INTEGRAL_MS_PERIODS, integral_ms

ALL = sorted(os.sched_getaffinity(0))
MS = 1_000_000


def test_integral_ms_sets_have_whole_ms_wcets_and_keep_u_at_most_m():
    for seed in range(20):
        ts = rtsched.generate(12, 1.9, periods=INTEGRAL_MS_PERIODS, seed=seed)
        out = integral_ms(ts, 2)
        assert len(out) == len(ts)
        assert all(t.wcet % MS == 0 and t.wcet >= MS and t.deadline == t.period for t in out)
        assert [t.period for t in out] == [t.period for t in ts]
        assert sum(Fraction(t.wcet, t.period) for t in out) <= 2
    # Eleven 1-ms tasks of T = 10 ms on one CPU cannot fit: refused in one line.
    ts = rtsched.TaskSet([rtsched.Task(wcet="1ms", period="10ms")] * 11)
    with pytest.raises(rtsched.RtschedError, match="cannot reach U"):
        integral_ms(ts, 1)
    with pytest.raises(rtsched.RtschedError, match="task 0: period"):
        integral_ms(rtsched.TaskSet([rtsched.Task(wcet="1ms", period="10.5ms")]), 1)


def test_the_spec_and_its_refusals():
    assert "spres-fig9" in available()
    s = load_experiment(lookup("spres-fig9"), name="spres-fig9")
    assert s.params["schedulers"] == ["spres", "run", "qps-g", "qps-c", "pedf"]
    assert s.params["horizon"] == 30 * 10**9 and s.params["util_frac"] == [0.9, 1.0]
    q = load_experiment(lookup("spres-fig9"), quick=True, name="spres-fig9")
    assert q.params["samples"] == 2 and q.params["horizon"] == 200 * MS
    text = lookup("spres-fig9").read_text()
    with pytest.raises(SpecError, match="not one of Fig. 9's"):
        parse_experiment(text, "x.toml", override={"schedulers": ["gsn-edf"]}, name="spres-fig9")
    with pytest.raises(SpecError, match="low ≤ high"):
        parse_experiment(text, "x.toml", override={"util_frac": [1.0, 0.5]}, name="spres-fig9")


def test_weighted_quantile_weighs_each_kept_value_by_its_runs_count():
    # One run of 100 samples kept whole: the p99 is its 99th value.
    xs = list(range(1, 101))
    assert f9.weighted_quantile([(100, xs)], 0.99) == 99.0
    # The same values thinned to 3 from a run of 1000 and a run of 10 kept whole: the big run
    # dominates.
    assert f9.weighted_quantile([(1000, [1, 500, 1000]), (10, [2000] * 10)], 0.5) == 500.0
    assert f9.weighted_quantile([], 0.99) is None


def _row(sched, status, ran, sch=(), rel=()):
    return {
        "point": "p",
        "m": 2,
        "n": 3,
        "util": 1.9,
        "set": 0,
        "scheduler": sched,
        "status": status,
        "ran": ran,
        "jobs": 10 if ran else None,
        "deadline_misses": 1 if ran else None,
        "trustworthy": ran or None,
        "isolated": False if ran else None,
        "inflated_util": 1.95 if ran and sched == "run" else None,
        "schedule_count": len(sch),
        "release_count": len(rel),
        "schedule_ns": list(sch),
        "release_ns": list(rel),
    }


def test_the_report_names_missing_schedulers_and_converts_the_papers_cycles():
    spec = parse_experiment(lookup("spres-fig9").read_text(), "x.toml", quick=True, name="spres-fig9")
    rows = [
        _row("spres", "ran", True, [1000] * 100, [2000] * 100),
        _row("run", "ran", True, [5000] * 100, [9000] * 100),
        _row("qps-g", "missing: not registered in this build", False),
        _row("qps-c", "refused: qps-c: bad", False),
        _row("pedf", "ran", True, [500] * 100, [700] * 100),
    ]
    res = f9.summarize(spec, pa.Table.from_pylist(rows, schema=f9.SCHEMA))
    assert res["per"]["run"]["schedule_p99_ns"] == 5000.0 and res["per"]["spres"]["release_p99_ns"] == 2000.0
    text = res["text"]
    assert "missing: not registered in this build" in text and "refused: qps-c: bad" in text
    assert "| qps-g | 135,994 | 61.82 |" in text, text  # the paper's cycles at its 2.2 GHz
    assert "| run | 101,294 | 46.04 |" in text
    # Misses per scheduler in the tables (1 of 10 jobs per run), and what the runs were given.
    assert text.count("| 1 / 10 |") == 2 * 3, text  # spres, run, pedf in both tables
    assert "stayed in place in 3 of 3 runs (isolate needs root)" in text
    assert "run, qps-g, qps-c: server budgets inflated by the maxima a pilot run" in text
    csv = f9.csv_files(res, spec)["csv"]
    assert {r[0] for r in csv.rows} == set(f9.FIG9_SCHEDULERS) and len(csv.rows) == 10


@pytest.mark.skipif(len(ALL) < 1, reason="needs a CPU")
def test_tiny_run_end_to_end(tmp_path):
    out = tmp_path / "o"
    over = {"samples": 1, "horizon": "50ms", "rt_priority": 0, "grid": {"m": [1], "n_per_m": [2.0]}}
    res = reproduce("spres-fig9", quick=True, out=out, jobs=1, progress=False, override=over)
    for suffix in ("png", "csv", "md"):
        assert (out / f"spres-fig9.{suffix}").stat().st_size > 0
    spec = parse_experiment((out / "spec.toml").read_text(), quick=True, override=over, name="spres-fig9")
    rows = pa.concat_tables(load_tables(spec, out)).to_pylist()
    assert [r["scheduler"] for r in rows] == list(f9.FIG9_SCHEDULERS)
    registered = set(rtsched.runtime.scheduler_names())
    for r in rows:
        if r["scheduler"] not in registered:
            assert not r["ran"] and r["status"].startswith("missing")
        elif r["ran"]:
            assert r["jobs"] > 0 and r["schedule_count"] > 0
        else:
            assert r["status"].startswith(("not run", "refused")), r["status"]
    assert "p99 scheduling overhead" in res["text"]


def test_inflate_pilot_p99_is_a_spec_value_and_misspelt_pilots_are_refused():
    text = lookup("spres-fig9").read_text()
    s = parse_experiment(text, "x.toml", override={"inflate": "pilot-p99"}, name="spres-fig9")
    assert s.params["inflate"] == "pilot-p99"
    assert load_experiment(lookup("spres-fig9"), name="spres-fig9").params["inflate"] == "pilot"  # the default
    for bad in ("pilot-p95", "pilot_p99", "", 99):
        with pytest.raises(SpecError, match='"pilot", "pilot-p99", "none" or an overhead model'):
            parse_experiment(text, "x.toml", override={"inflate": bad}, name="spres-fig9")


SUMMARY = {
    "overheads": {
        "schedule": {"count": 500, "p99_ns": 3_000, "max_ns": 9_000_000},
        "release": {"count": 200, "p99_ns": 4_000, "max_ns": 11_500_000},
        "tree_events": {"count": 300, "p99_ns": 6, "max_ns": 9},  # a count: never a constant
        "push_failure": {"count": 0, "p99_ns": 0, "max_ns": 0},  # outside the vocabulary
    }
}


def test_pilot_constants_take_the_maximum_or_the_p99_of_each_time_term():
    assert f9.pilot_constants(SUMMARY) == {"schedule_ns": 9_000_000, "release_ns": 11_500_000}
    assert f9.pilot_constants(SUMMARY, "max") == f9.pilot_constants(SUMMARY)
    assert f9.pilot_constants(SUMMARY, "p99") == {"schedule_ns": 3_000, "release_ns": 4_000}
    with pytest.raises(rtsched.RtschedError, match="'max' or 'p99'"):
        f9.pilot_constants(SUMMARY, "p95")


@pytest.mark.parametrize(("inflate", "expect"), [("pilot", 11_500_000), ("pilot-p99", 4_000)])
def test_a_pilot_inflates_the_budgets_by_its_statistic(monkeypatch, inflate, expect):
    # The runs are recorded, not made: the pilot's summary is SUMMARY, and the measured run must
    # get the constants of the statistic the spec names.
    import rtsched.runtime

    calls = []

    def fake_run_raw(ts, **kw):
        calls.append(kw)
        if kw.get("inflate") is None:
            return {"interrupted": False, "summary": SUMMARY}
        s = {"jobs": 1, "deadline_misses": 0, "trustworthy": True, "inflation": {"utilization": 1.5}}
        return {"interrupted": False, "summary": s, "overhead_samples": {}}

    monkeypatch.setattr(rtsched.runtime, "run_raw", fake_run_raw)
    p = {"inflate": inflate, "pilot": MS, "horizon": 2 * MS, "rt_priority": 0, "max_samples": 10}
    ts = rtsched.TaskSet([rtsched.Task(wcet="1ms", period="10ms")])
    row = f9._one(p, [0], "run", ts, None, 1)
    assert row["ran"] and row["inflated_util"] == 1.5
    assert [c["duration"] for c in calls] == [MS, 2 * MS]
    assert calls[1]["inflate"]["release_ns"] == expect and "tree_events_ns" not in calls[1]["inflate"]


def test_the_report_says_a_p99_pilot_is_a_soft_inflation():
    spec = parse_experiment(
        lookup("spres-fig9").read_text(), "x.toml", quick=True, override={"inflate": "pilot-p99"}, name="spres-fig9"
    )
    rows = [_row("run", "ran", True, [5000] * 100, [9000] * 100)]
    text = f9.summarize(spec, pa.Table.from_pylist(rows, schema=f9.SCHEMA))["text"]
    assert "budgets inflated by the p99s a pilot run of the set measured (a soft inflation" in text, text
