"""`rtsched simulate --overheads`: constants and measured models, the summary's `overheads`
object against hand-computed schedules and against the trace, and bad model files (exit 2)."""

import json

import pytest
import rtsched


def write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return p


def taskset(tmp_path, tasks, m=1):
    return write(tmp_path, "ts.json", {"m": m, "tasks": [{"wcet": c, "period": t} for c, t in tasks]})


MODEL = {
    "format": "rtsched-overhead-model",
    "version": 1,
    "scheduler": "gsn-edf",
    "m": 2,
    "cpus": [0, 1],
    "machine": {"hostname": "h", "platform": "p", "processor": "x", "cpu_count": 2},
    "seconds_per_run": 1.0,
    "seed": 1,
    "terms": {
        # At n = 2 (the sets below): release 3 (max) / 1 (avg, 0.4 rounded up), schedule 2 / 1,
        # context switch 1 / 1; lock_wait is part of schedule and not charged.
        "release": {"n": [1, 3], "avg_ns": [0.4, 0.4], "max_ns": [2, 4], "count": [10, 10]},
        "schedule": {"n": [2, 4], "avg_ns": [1, 1], "max_ns": [2, 9], "count": [10, 10]},
        "context_switch": {"n": [2], "avg_ns": [0.5], "max_ns": [1], "count": [10]},
        "lock_wait": {"n": [2], "avg_ns": [5], "max_ns": [50], "count": [3]},
    },
    "runs": [],
}


def test_constants_hand_computed(cli, tmp_path):
    # One task C = 2, T = 10 on one CPU: release handler [0,1), Δsch [1,2), Δcxs [2,3), runs
    # [3,5): response 5 for each of the two jobs released before the horizon of 20 ns.
    f = taskset(tmp_path, [(2, 10)])
    o = write(tmp_path, "o.json", {"release_ns": 1, "schedule_ns": "1ns", "context_switch_ns": 1})
    code, out, err = cli("simulate", f, "--horizon", "20ns", "--overheads", o, "--json")
    assert code == 0, err
    s = json.loads(out)
    assert s["max_response_time_ns"] == 5 and s["deadline_misses"] == 0
    ov = s["overheads"]
    assert ov["source"] == "constant" and ov["stat"] is None and ov["n"] == 1
    assert ov["values"] == {
        "release_ns": 1,
        "release_event_ns": 0,
        "schedule_ns": 1,
        "context_switch_ns": 1,
        "ipi_ns": 0,
        "tick_ns": 0,
    }
    assert {k: (v["count"], v["total_ns"]) for k, v in ov["charged"].items()} == {
        "release": (2, 2),
        "schedule": (2, 2),
        "context_switch": (2, 2),
        "tick": (0, 0),
        "ipi": (0, 0),
    }
    assert ov["cpu_time_ns"] == 6
    # The table says so too.
    code, table, _ = cli("simulate", f, "--horizon", "20ns", "--overheads", o)
    assert code == 0 and "CPU time charged 6 ns" in table


def test_model_max_and_avg_and_trace_agree(cli, tmp_path):
    f = taskset(tmp_path, [(3, 10), (4, 20)], m=2)
    mf = write(tmp_path, "model.json", MODEL)
    tr = tmp_path / "t.jsonl"
    code, out, err = cli("simulate", f, "--overheads", mf, "--trace", tr, "--json")
    assert code == 0, err
    s = json.loads(out)
    ov = s["overheads"]
    assert ov["source"] == "model" and ov["stat"] == "max" and ov["n"] == 2 and ov["model_scheduler"] == "gsn-edf"
    assert (ov["values"]["release_ns"], ov["values"]["schedule_ns"], ov["values"]["context_switch_ns"]) == (3, 2, 1)
    # The charged totals are the trace's overhead records up to the horizon.
    recs = [json.loads(x) for x in tr.read_text().splitlines()][1:]
    for kind, v in ov["charged"].items():
        mine = [r for r in recs if r["ev"] == "overhead" and r["kind"] == kind and r["t"] <= s["horizon_ns"]]
        assert v["count"] == len(mine) and v["total_ns"] == sum(r["duration"] for r in mine), kind
    assert ov["cpu_time_ns"] == sum(v["total_ns"] for k, v in ov["charged"].items() if k != "ipi")
    # Releases are handled on CPU 0 (the global release domain); one handler per due time.
    rel = [r for r in recs if r["ev"] == "overhead" and r["kind"] == "release"]
    assert rel and all(r["cpu"] == 0 for r in rel)
    assert len(rel) == len({r["t"] for r in recs if r["ev"] == "release"})
    code, out, err = cli("simulate", f, "--overheads", mf, "--overhead-stat", "avg", "--json")
    assert code == 0, err
    a = json.loads(out)["overheads"]
    assert a["stat"] == "avg" and (a["values"]["release_ns"], a["values"]["schedule_ns"]) == (1, 1)
    assert a["cpu_time_ns"] < ov["cpu_time_ns"]
    assert "measured on m = 2" not in err  # same m


def test_zero_overheads_change_nothing_but_the_report(cli, tmp_path):
    f = taskset(tmp_path, [(2, 5), (3, 7), (4, 10)], m=2)
    z = write(tmp_path, "z.json", {})
    for sched in ["gedf", "pedf", "pfp", "gedf-quantum"]:
        a = json.loads(cli("simulate", f, "--scheduler", sched, "--json")[1])
        code, out, err = cli("simulate", f, "--scheduler", sched, "--overheads", z, "--json")
        assert code == 0, err
        b = json.loads(out)
        assert b["overheads"]["cpu_time_ns"] == 0
        b["overheads"] = None
        assert a == b, sched


def test_tight_set_misses_with_overheads(tmp_path):
    ts = rtsched.TaskSet([rtsched.Task(wcet=19, period=20), rtsched.Task(wcet=9, period=10)])
    assert rtsched.simulate(ts, 2)["deadline_misses"] == 0
    s = rtsched.simulate(ts, 2, overheads={"release_ns": 1, "schedule_ns": 1})
    assert s["deadline_misses"] > 0
    # A path and JSON text work as well as a dict.
    p = write(tmp_path, "o.json", {"release_ns": 1, "schedule_ns": 1})
    assert rtsched.simulate(ts, 2, overheads=p) == s == rtsched.simulate(ts, 2, overheads=p.read_text())


def test_model_for_another_m_is_noted(cli, tmp_path):
    f = taskset(tmp_path, [(3, 10), (4, 20)], m=4)
    code, _, err = cli("simulate", f, "--overheads", write(tmp_path, "model.json", MODEL), "--json")
    assert code == 0 and "measured on m = 2" in err


@pytest.mark.parametrize(
    "model, words",
    [
        (
            {
                "format": "rtsched-overhead-model",
                "version": 1,
                "terms": {"ipi": {"n": [4, 2], "avg_ns": [1, 1], "max_ns": [1, 1]}},
            },
            ["overheads.terms.ipi.n[1]", "increase"],
        ),
        (
            {"format": "rtsched-overhead-model", "version": 1, "terms": {"release": {"n": [2], "avg_ns": [1]}}},
            ["overheads.terms.release.max_ns", "missing"],
        ),
        (
            {
                "format": "rtsched-overhead-model",
                "version": 1,
                "terms": {"release": {"n": [2], "avg_ns": ["x"], "max_ns": [1]}},
            },
            ["overheads.terms.release.avg_ns[0]"],
        ),
        ({"format": "rtsched-overhead-model", "version": 3, "terms": {}}, ["overheads.version"]),
        ({"schedule_us": 4}, ["overheads.schedule_us", "unknown key"]),
        ({"ipi_ns": "fast"}, ["overheads.ipi_ns"]),
    ],
)
def test_bad_model_files_exit_2(cli, tmp_path, model, words):
    f = taskset(tmp_path, [(1, 4)])
    code, _, err = cli("simulate", f, "--overheads", write(tmp_path, "bad.json", model))
    assert code == 2
    for w in words:
        assert w in err, (w, err)


def test_unsupported_combinations_exit_2(cli, tmp_path):
    f = taskset(tmp_path, [(1, 4)], m=1)
    o = write(tmp_path, "o.json", {"release_ns": 1})
    code, _, err = cli("simulate", f, "--scheduler", "spres", "--overheads", o)
    assert code == 2 and "not supported for spres" in err
    code, _, err = cli("simulate", f, "--scheduler", "rtws", "--overheads", o)
    assert code == 2 and "not supported for rtws" in err
    code, _, err = cli("simulate", f, "--overhead-stat", "avg")
    assert code == 2 and "overhead_stat" in err
    code, _, err = cli("simulate", f, "--overheads", tmp_path / "missing.json")
    assert code == 2 and "cannot read" in err
    code, _, err = cli("simulate", f, "--overheads", write(tmp_path, "t.json", {"tick_ns": 1}))
    assert code == 2 and "tick_ns" in err
