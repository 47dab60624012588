"""`rtsched reproduce spres-runtime` (Brandenburg & Gül, RTSS 2016, Figs. 7-8 and Table I on
real threads): a tiny run end to end (every scheduler present, the partitioned ones never
migrate, migrations and samples equal to the exported traces' counts, the files and figure
written), the truncation of split tasks for P-EDF/P-FP, the thinning of samples and the
weighted quantiles against exact ones, and bad specs. Real runs of 0.3 s at SCHED_FIFO where
permitted; no timing is asserted."""

import csv
import os
import random

import pyarrow as pa
import pytest
import rtsched
from rtsched.experiments.registry import available, load_experiment, lookup, parse_experiment, reproduce
from rtsched.experiments.repro.spres_table1 import threads as sr
from rtsched.experiments.repro.spres_table1 import threads_report as rep
from rtsched.experiments.spec import SpecError
from rtsched.experiments.sweep import load_tables

ALL = sorted(os.sched_getaffinity(0))
SCHEDS = ["spres", "pedf", "pfp", "gsn-edf"]


def tiny(prio: int) -> dict:
    # The quick form's (n = m+1, U = 0.95m) point: its first set splits a task (deterministic:
    # the seed and the cascade are).
    return {
        "samples": 1,
        "horizon": "300ms",
        "slack": [0.0, 0.5],
        "check_trace": True,
        "rt_priority": prio,
        "cpus": ALL[:2],
        "grid": {"m": [2], "n": ["m+1"], "util_frac": [0.95]},
    }


def test_registered_spec_is_the_papers_setup():
    assert "spres-runtime" in available()
    s = load_experiment(lookup("spres-runtime"), name="spres-runtime")
    assert s.params["schedulers"] == SCHEDS
    assert s.params["slack"] == [0.0, 0.1, 0.25, 0.33, 0.5]
    assert {p.params["util_frac"] for p in s.points} == {0.75, 0.8, 0.85, 0.9, 0.95}
    assert {p.params["n_expr"] for p in s.points} >= {"m+1", "2m", "10m"}
    assert s.params["soft_unsplit"] is True  # the artifact variant: every reservation soft
    q = load_experiment(lookup("spres-runtime"), quick=True, name="spres-runtime")
    assert q.params["horizon"] == 10**9 and q.params["samples"] == 2 and len(q.points) == 4
    t = load_experiment(lookup("spres-runtime"), name="spres-runtime", variant="text")
    assert t.params["soft_unsplit"] is False


@pytest.mark.skipif(len(ALL) < 2, reason="the reproduction's split set needs two CPUs")
def test_tiny_run_end_to_end(tmp_path):
    out = tmp_path / "o"
    try:
        res, rt = reproduce("spres-runtime", quick=True, out=out, jobs=1, progress=False, override=tiny(10)), True
    except SpecError as e:
        assert "CAP_SYS_NICE" in str(e), e
        res, rt = reproduce("spres-runtime", quick=True, out=out, jobs=1, progress=False, override=tiny(0)), False
    for f in ("spres-runtime.png", "spres-runtime.csv", "spres-runtime.md", "table1.csv", "runs.csv"):
        assert (out / f).stat().st_size > 0, f
    assert (out / "spres-runtime.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    spec = parse_experiment(
        (out / "spec.toml").read_text(), quick=True, override=tiny(10 if rt else 0), name="spres-runtime"
    )
    rows = pa.concat_tables(load_tables(spec, out)).to_pylist()
    assert [(r["scheduler"], r["slack"]) for r in rows] == [(s, 0.0) for s in SCHEDS] + [("spres", 0.5)]
    split = rows[0]["split_tasks"]
    assert rows[0]["placed"] and split >= 1
    for r in rows:
        assert r["ran"] and r["jobs"] > 0 and r["jobs"] >= r["completed"]
        assert 0 <= r["deadline_misses"] <= r["jobs"]
        # Migrations and every term's samples equal the exported trace's (check_trace).
        assert r["migrations"] >= 0 and r["trace_migrations"] == r["migrations"]
        assert r["schedule_count"] > 0 and r["release_count"] > 0
        for t in sr.TERMS:
            xs = r[f"{t}_ns"]
            assert xs == sorted(xs) and len(xs) == min(r[f"{t}_count"], spec.params["max_samples"])
        if r["scheduler"] in ("pedf", "pfp"):
            assert r["migrations"] == 0 and r["truncated_tasks"] == split
            assert r["migration_timer_count"] == r["subtask_activation_count"] == 0
        if r["scheduler"] == "spres" and r["slack"] == 0.0:
            assert r["sim_migrations"] is not None and r["sim_migrations"] > 0
            # The simulator migrates this set's split task; so do the threads, unless the host
            # starved them (at normal priority, or under other SCHED_FIFO threads: then jobs miss).
            if rt and r["deadline_misses"] == 0:
                assert r["migrations"] > 0 and r["subtask_activation_count"] > 0
    with open(out / "runs.csv") as f:
        runs = list(csv.DictReader(f))
    assert [r["scheduler"] for r in runs] == SCHEDS and all(r["runs"] == "1" for r in runs)
    with open(out / "spres-runtime.csv") as f:
        stats = list(csv.DictReader(f))
    assert {(r["scheduler"], r["term"]) for r in stats if r["figure"] == "fig7"} == {
        (s, t) for s in SCHEDS for t in ("schedule", "context_switch", "release")
    }
    fig8 = {r["term"]: r for r in stats if r["figure"] == "fig8"}
    assert set(fig8) == {"schedule", "migration_timer", "subtask_activation"}
    assert int(fig8["subtask_activation"]["samples"]) == rows[0]["subtask_activation_count"]
    with open(out / "table1.csv") as f:
        t1 = list(csv.DictReader(f))
    assert [float(r["slack"]) for r in t1] == [0.0, 0.5]
    assert int(t1[0]["migrations"]) == rows[0]["migrations"] and int(t1[1]["migrations"]) == rows[4]["migrations"]
    assert float(t1[0]["paper_rate"]) == 8.23 and float(t1[1]["paper_rate"]) == 1.64
    assert "Table I" in res["text"] and "Fig. 8" in res["text"]


def _fig1():
    # Brandenburg & Gül, RTSS 2016, Fig. 1: three (10, 15) tasks on two CPUs, one split.
    return rtsched.TaskSet([rtsched.Task(wcet="10ms", period="15ms") for _ in range(3)])


def test_truncation_keeps_each_task_on_its_first_part():
    ts = _fig1()
    pl = rtsched.partition(ts, 2, "spres")
    tts, part, cut = sr.truncated(ts, pl)
    assert cut == sum(1 for t in pl["tasks"] if t["parts"] > 1) == 1
    assert sorted(i for c in part for i in c) == [0, 1, 2]
    firsts = {r["task"]: (c["cpu"], r["budget"]) for c in pl["cpus"] for r in c["reservations"] if r["part"] == 1}
    for i, (t, u) in enumerate(zip(ts, tts, strict=True)):
        cpu, budget = firsts[i]
        assert i in part[cpu] and (u.period, u.deadline) == (t.period, t.deadline)
        parts = next(x["parts"] for x in pl["tasks"] if x["task"] == i)
        assert u.wcet == (t.wcet if parts == 1 else min(t.wcet, budget))
    assert any(u.wcet < t.wcet for t, u in zip(ts, tts, strict=True))


def test_thinned_samples_give_the_exact_quantiles_up_to_one_rank():
    rng = random.Random(5)
    runs = [[rng.randrange(1, 10**6) for _ in range(rng.randrange(50, 3000))] for _ in range(6)]
    every = sorted(x for r in runs for x in r)
    k = 100
    rows = [{"schedule_ns": sr.thin(r, k), "schedule_count": len(r)} for r in runs]
    for r, xs in zip(rows, runs, strict=True):
        assert len(r["schedule_ns"]) == min(k, len(xs))
        assert r["schedule_ns"][0] == min(xs) and r["schedule_ns"][-1] == max(xs)
    d = rep.dist(rows, "schedule")
    assert d["samples"] == len(every) and d["max_ns"] == every[-1] and d["runs"] == 6
    for q, key in ((0.5, "median_ns"), (0.99, "p99_ns")):
        rank = every.index(d[key]) / len(every)
        assert abs(rank - q) < 0.05, (q, rank)
    # Without thinning, the exact nearest-rank quantiles.
    full = rep.dist([{"schedule_ns": sorted(r), "schedule_count": len(r)} for r in runs], "schedule")
    n = len(every)
    assert full["median_ns"] == every[(n + 1) // 2 - 1] and full["p99_ns"] == every[-(-99 * n // 100) - 1]


@pytest.mark.parametrize(
    "over, msg",
    [
        ({"schedulers": ["spres", "nope"]}, "unknown mechanism 'nope'"),
        ({"schedulers": ["gedf-mp"]}, "dedicated CPU"),
        ({"schedulers": ["pedf"], "slack": [0.0, 0.5]}, "add 'spres'"),
        ({"cpus": "0-3"}, "the grid's m must be [4]"),
        ({"exec_scale": 0}, "exec_scale"),
        ({"rt_priority": 99}, "rt_priority"),
        ({"max_samples": 1}, "max_samples"),
        ({"soft_unsplit": "yes"}, "soft_unsplit: expected true or false"),
    ],
)
def test_bad_specs_have_one_line_errors(over, msg):
    text = lookup("spres-runtime").read_text()
    with pytest.raises(SpecError) as e:
        parse_experiment(text, "spres-runtime.toml", override=over, name="spres-runtime")
    assert msg in str(e.value) and len(str(e.value).splitlines()) == 1


def test_run_raw_checks_the_new_arguments():
    ts = _fig1()
    for bad in (1.5, -0.1, float("nan"), "half"):
        with pytest.raises(rtsched.RtschedError, match="exec_min_fraction") as e:
            rtsched.runtime.run_raw(ts, scheduler="spres", cpus=ALL[:1], duration="10ms", exec_min_fraction=bad)
        assert len(str(e.value).splitlines()) == 1
    with pytest.raises(rtsched.RtschedError, match="unknown export"):
        rtsched.runtime.run_raw(ts, scheduler="gsn-edf", cpus=ALL[:2], duration="10ms", exports=["samples"], force=True)


def test_overhead_samples_are_what_the_summary_counts():
    ts = rtsched.TaskSet([rtsched.Task(wcet="1ms", period="10ms"), rtsched.Task(wcet="2ms", period="20ms")])
    res = rtsched.runtime.run_raw(
        ts, scheduler="pedf", cpus=ALL[:1], duration="100ms", exports=["overhead_samples", "job_csv"], quiet=True
    )
    samples, ov = res["overhead_samples"], res["summary"]["overheads"]
    assert "job_csv" in res and samples["release"]
    for term, xs in samples.items():
        assert all(isinstance(x, int) and x >= 0 for x in xs)
        if term in ov:  # the summary keeps what its interference filter did not discard
            assert ov[term]["count"] + ov[term]["discarded"] == len(xs)
            assert not xs or ov[term]["max_raw_ns"] == max(xs)
        else:
            assert term == "host_interference", term  # the interference itself, not an overhead
