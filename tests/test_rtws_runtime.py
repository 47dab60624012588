"""`rtsched reproduce rtws-runtime`: Nogueira et al., EUC 2012 Tables II-III on real threads
(docs/reproductions.md). A reduced quick form runs end to end (one set per window, 300 ms per
run, SCHED_FIFO where permitted); structure only — every job accounted, both schedulers and both
engines present, the counts consistent with the run's own trace and job CSV, the simulator's
columns equal to direct simulator calls on the same sets. No timing is asserted."""

import csv
import io
import json
import math
import os
from pathlib import Path

import pyarrow as pa
import pytest
import rtsched
from rtsched import _core
from rtsched.experiments.errors import SpecError
from rtsched.experiments.registry import load_experiment, lookup, reproduce
from rtsched.experiments.repro import rtws_tables
from rtsched.experiments.repro.rtws_tables import threads as rtws_runtime
from rtsched.experiments.sweep import load_tables
from rtsched.runtime import run_forkjoin_raw

CPUS = sorted(os.sched_getaffinity(0))
M = min(2, len(CPUS))
DURATION = 300_000_000
TINY = {
    "samples": 1,
    "horizon": "300ms",
    "rt_priority": 10,
    "grid": {"m": [M], "window": [[0.38, 0.40], [0.73, 0.75]]},
}


def expected_jobs(text: str, horizon: int) -> tuple[int, int]:
    """(fork-join jobs, thread jobs) released in [0, horizon): synchronous periodic releases."""
    jobs = threads = 0
    for t in json.loads(text)["tasks"]:
        k = math.ceil(horizon / t["period"])
        jobs += k
        threads += k * sum(len(r) for r in t["regions"])
    return jobs, threads


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rtws-runtime")
    res = reproduce("rtws-runtime", quick=True, out=out, jobs=1, progress=False, override=TINY)
    spec = load_experiment(lookup("rtws-runtime"), quick=True, override=TINY, name="rtws-runtime")
    return res, spec, out, pa.concat_tables(load_tables(spec, out)).to_pylist()


def test_spec_is_registered_and_uses_the_rtws_tables_sets():
    full = load_experiment(lookup("rtws-runtime"), name="rtws-runtime")
    quick = load_experiment(lookup("rtws-runtime"), quick=True, name="rtws-runtime")
    assert full.params["rt_priority"] == 50 and full.params["cpus"] is None
    assert {p.params["m"] for p in full.points} == {2}
    assert len(quick.points) == 3 and quick.params["samples"] < full.params["samples"]
    # Same seed derivation as rtws-tables: the point seeds (hence the sets) are that reproduction's.
    tables = load_experiment(lookup("rtws-tables"))
    seeds = {(p.params["m"], p.params["lo"]): p.params["seed"] for p in tables.points}
    for p in full.points:
        assert p.params["seed"] == seeds[(p.params["m"], p.params["lo"])]


def test_bad_specs_are_refused():
    text = lookup("rtws-runtime").read_text()
    for over, match in (
        ({"cpus": "0"}, "m = 2 needs 2 CPUs"),
        ({"cpus": "x"}, "cpus"),
        ({"rt_priority": 100}, "rt_priority"),
        ({"rt_priority": True}, "rt_priority"),
        ({"grid": {"window": [[0.5, 0.4]]}}, "window"),
    ):
        with pytest.raises(SpecError, match=match):
            rtws_tables.parse(text, "rtws-runtime.toml", override=over, engine="threads")
    spec = rtws_tables.parse(
        text, "rtws-runtime.toml", override={"cpus": [1, 0], "grid": {"m": [1, 2]}}, engine="threads"
    )
    assert [p.params["cpus"] for p in spec.points][:1] == [[1]] and spec.points[-1].params["cpus"] == [1, 0]


def test_remote_starts_counts_forked_threads_that_start_elsewhere():
    # One task: region 0 (slot 0), region 1 (slots 1, 2), region 2 (slot 3).
    text = json.dumps({"m": 2, "tasks": [{"period": 100, "deadline": 100, "regions": [[5], [5, 5], [5]]}]})
    ev = [
        (0, "run", 0, 0, 0),
        (5, "complete", 0, 0, 0),  # region 0 joins on CPU 0: region 1 forks there
        (5, "run", 0, 1, 0),  # slot 1 starts on CPU 0 (local)
        (6, "run", 1, 2, 0),  # slot 2 starts on CPU 1 (remote)
        (10, "complete", 0, 1, 0),
        (11, "complete", 1, 2, 0),  # the last thread of region 1 completes on CPU 1
        (11, "run", 0, 3, 0),  # slot 3 starts on CPU 0 (remote: forked on CPU 1)
        (12, "run", 1, 3, 0),  # a resumption: not a start
        (50, "run", 1, 1, 1),  # job 1's region 1 never forked in the trace: not counted
    ]
    jsonl = "\n".join(
        [json.dumps({"ev": "meta"})]
        + [json.dumps({"t": t, "ev": e, "cpu": c, "task": s, "job": j}) for t, e, c, s, j in ev]
    )
    assert rtws_runtime.remote_starts(text, jsonl) == 2


def test_quick_form_runs_end_to_end(run):
    res, spec, out, rows = run
    text = res["text"]
    for title in ("Table II", "Table III", "Averages per set"):
        assert title in text
    # The paper's m = 2 SCHED_DEADLINE ratios are printed beside ours (38-40%).
    if M == 2:
        assert "| 2.75 |" in text and "| 1.35 |" in text
    assert res["figure"].is_file() and res["figure"].stat().st_size > 0
    assert res["tables"].is_file() and res["csv"].is_file()
    table = list(csv.DictReader(io.StringIO(res["csv"].read_text())))
    assert {(r["engine"], r["scheduler"]) for r in table} == set(rtws_runtime.ROWS)
    # Four rows per set, in order, for every point.
    assert len(rows) == len(spec.points) * len(rtws_runtime.ROWS)
    assert [(r["engine"], r["scheduler"]) for r in rows] == list(rtws_runtime.ROWS) * len(spec.points)


def _set_text(p, k: int) -> str:
    return _core.forkjoin_generate(p.params["m"], p.params["lo"], p.params["hi"], p.params["seed"], k + 1)[k]


def test_every_job_is_accounted_and_the_counts_are_consistent(run):
    _, spec, _, rows = run
    for p in spec.points:
        text = _set_text(p, 0)
        fj_jobs, threads = expected_jobs(text, DURATION)
        by = {(r["engine"], r["scheduler"]): r for r in rows if r["point"] == p.id}
        rt, pp = by[("threads", "rtws")], by[("threads", "push-pull")]
        # Both mechanisms released every thread job due; each one completed or is pending.
        for r in (rt, pp):
            assert r["threads"] == threads
            assert r["threads_completed"] + r["threads_pending"] == r["threads"]
        # Both ran the fork-join jobs (push-pull too: its threads with their regions' precedence).
        for r in (rt, pp, by[("sim", "rtws")], by[("sim", "gedf-fj")]):
            assert r["fj_jobs"] == fj_jobs
        assert rt["fj_completed"] <= rt["fj_jobs"] and pp["fj_completed"] <= pp["fj_jobs"]
        # Steals: only under RTWS, each one a successful Rule E search among the traced attempts.
        assert 0 <= rt["steals"] <= rt["steal_attempts"]
        assert pp["steals"] == 0 and pp["steal_attempts"] is None
        assert rtws_runtime.paper_migrations(rt) == rt["steals"]
        assert rtws_runtime.paper_migrations(pp) == pp["migrations"] + pp["start_migrations"]
        assert rt["cpus"] == pp["cpus"] == ",".join(map(str, CPUS[:M]))
        assert rt["rt_priority"] in (10, None) and rt["duration_ns"] == DURATION


def test_the_simulator_columns_are_direct_simulator_calls(run):
    _, spec, _, rows = run
    for p in spec.points:
        text = _set_text(p, 0)
        by = {(r["engine"], r["scheduler"]): r for r in rows if r["point"] == p.id}
        m = p.params["m"]
        rt = rtsched.simulate_forkjoin(text, m, DURATION)
        fj = rtsched.simulate_forkjoin(text, m, DURATION, scheduler="gedf")
        for r, d in ((by[("sim", "rtws")], rt), (by[("sim", "gedf-fj")], fj)):
            assert (r["migrations"], r["preemptions"], r["context_switches"]) == (
                d["migrations"],
                d["preemptions"],
                d["context_switches"],
            )
        assert by[("sim", "rtws")]["steals"] == rt["steals"]
        assert by[("sim", "gedf-fj")]["start_migrations"] == fj["remote_starts"]
        # The same set as rtws-tables' set 0 of this (m, window).
        assert text == _core.forkjoin_generate(m, p.params["lo"], p.params["hi"], p.params["seed"], 1)[0]
        assert rtws_tables.FJ_SEED_DERIVATION == "rtsched-forkjoin-seed-v1"


def test_run_summary_counts_are_those_of_its_trace():
    """What the evaluator reads from a run's summary (steals, steal attempts, context switches,
    jobs) is what the run's exported trace holds up to the run's horizon (its duration). The
    trace also keeps what happened while the run wound down after it (a job completing a few
    µs late, more under load), which the metrics leave out by definition (docs/runtime.md)."""
    text = _core.forkjoin_generate(M, 0.73, 0.75, 3, 1)[0]
    r = run_forkjoin_raw(text, cpus=CPUS[:M], duration="300ms", exports=["jsonl", "job_csv"], quiet=True)
    s = r["summary"]
    recs = [json.loads(x) for x in r["jsonl"].splitlines()[1:]]
    h = s["duration_ns"]

    def count(ev, **kw):
        return sum(1 for x in recs if x["ev"] == ev and all(x.get(k) == v for k, v in kw.items()))

    def within(ev):  # the metrics' horizon rule: releases before it, other events at or before it
        return sum(1 for x in recs if x["ev"] == ev and (x["t"] < h if ev == "release" else x["t"] <= h))

    assert s["steals"] == within("steal") == s["forkjoin"]["steals"]
    assert s["overheads"]["steal"]["count"] == count("overhead", kind="steal") >= s["steals"]
    assert s["jobs"] == within("release") and s["completed"] == within("complete")
    # A context switch is a dispatch of a job other than the one the CPU holds: at most one per run record.
    assert 0 < s["context_switches"] <= count("run")
    rows = list(csv.DictReader(io.StringIO(r["job_csv"])))
    assert len(rows) == s["forkjoin"]["jobs"] and sum(int(x["migrations"]) for x in rows) == s["migrations"]


def test_the_parallel_job_example_in_the_docs_is_the_compiled_one():
    """docs/runtime.md "Parallel user jobs" shows crates/runtime/examples/parallel_job.rs, which
    `cargo test` builds: the two must be the same code."""
    root = Path(__file__).resolve().parent.parent
    doc = (root / "docs" / "runtime.md").read_text(encoding="utf-8")
    marker = "<!-- example: crates/runtime/examples/parallel_job.rs -->\n```rust\n"
    assert marker in doc
    shown = doc.split(marker, 1)[1].split("```", 1)[0]
    assert shown == (root / "crates" / "runtime" / "examples" / "parallel_job.rs").read_text(encoding="utf-8")
