"""`rtsched simulate` and `rtsched.simulate`: summary keys, hand-computed schedules, overload,
global versus partitioned, the trace exports, and bad input (exit 2)."""

import json

import pytest
import rtsched

KEYS = {
    "jobs",
    "deadline_misses",
    "max_tardiness_ns",
    "max_response_time_ns",
    "preemptions",
    "migrations",
    "context_switches",
    "suspensions",
    "suspension_ns",
    "steals",
    "horizon_ns",
    "horizon_capped",
    "horizon_message",
    "overheads",
    "interrupted",
    "per_task",
}
TASK_KEYS = {"task", "jobs", "deadline_misses", "max_response_time_ns", "preemptions", "migrations"}


def write(tmp_path, tasks, m=None, name="ts.json"):
    p = tmp_path / name
    obj = {
        "tasks": [
            {"wcet": c, "period": t} if d is None else {"wcet": c, "period": t, "deadline": d} for c, t, d in tasks
        ]
    }
    if m is not None:
        obj["m"] = m
    p.write_text(json.dumps(obj))
    return p


# τ0 = (C 1, T 4), τ1 = (C 2, T 6) on one CPU, EDF, hyperperiod 12:
# 0-1 τ0.0, 1-3 τ1.0, 4-5 τ0.1, 6-8 τ1.1, 8-9 τ0.2. Responses: τ0 1,1,1; τ1 3,2.
# Context switches: 0 idle→τ0, 1 τ0→τ1, 3 τ1→idle, 4 idle→τ0, 5 τ0→idle, 6 idle→τ1, 8 τ1→τ0,
# 9 τ0→idle = 8.
SMALL = [(1, 4, None), (2, 6, None)]


def test_json_summary_keys_and_hand_computed_schedule(cli, tmp_path):
    f = write(tmp_path, SMALL)
    code, out, err = cli("simulate", f, "--m", 1, "--scheduler", "gedf", "--json")
    assert code == 0, err
    s = json.loads(out)
    assert set(s) == KEYS
    assert all(set(t) == TASK_KEYS for t in s["per_task"])
    assert s["horizon_ns"] == 12 and s["horizon_capped"] is False and s["horizon_message"] is None
    assert s["jobs"] == 5 and s["deadline_misses"] == 0 and s["max_tardiness_ns"] == 0
    assert s["max_response_time_ns"] == 3
    assert (s["preemptions"], s["migrations"], s["context_switches"]) == (0, 0, 8)
    assert s["steals"] is None and s["overheads"] is None
    assert (s["suspensions"], s["suspension_ns"]) == (0, 0)
    assert [(t["task"], t["jobs"], t["max_response_time_ns"]) for t in s["per_task"]] == [(0, 3, 1), (1, 2, 3)]
    # pedf on one CPU gives the same schedule (and says how it partitioned).
    code, out2, err2 = cli("simulate", f, "--m", 1, "--scheduler", "pedf", "--json")
    assert code == 0 and json.loads(out2) == s
    assert "worst-fit decreasing" in err2
    # the table
    code, table, _ = cli("simulate", f, "--m", 1)
    assert code == 0 and "deadline misses 0" in table and "max response time 3 ns" in table


def test_python_api_matches_cli(cli, tmp_path):
    ts = rtsched.TaskSet([rtsched.Task(wcet=c, period=t) for c, t, _ in SMALL])
    s = rtsched.simulate(ts, 1)
    code, out, _ = cli("simulate", write(tmp_path, SMALL), "--m", 1, "--json")
    assert s == json.loads(out)
    assert rtsched.simulate(ts, 1, horizon="6ns")["jobs"] == 3  # releases at 0, 4 (τ0) and 0 (τ1)


def test_preemption_and_tardiness(tmp_path):
    # τ0 = (2, 5), τ1 = (4, 10), D1 = 6, on one CPU: τ1 cannot finish by 6 → a miss.
    ts = rtsched.TaskSet([rtsched.Task(wcet=2, period=5), rtsched.Task(wcet=4, period=10, deadline=6)])
    s = rtsched.simulate(ts, 1)
    # 0-2 τ0.0, 2-6 τ1.0 (d 6) finishes at 6: meets; 5: τ0.1 (d 10) waits → 6-8. No miss.
    assert s["deadline_misses"] == 0 and s["max_response_time_ns"] == 6
    ts = rtsched.TaskSet([rtsched.Task(wcet=3, period=5), rtsched.Task(wcet=4, period=10, deadline=6)])
    s = rtsched.simulate(ts, 1)
    # 0-3 τ0.0, 3-7 τ1.0 finishes at 7 > 6: one miss, tardiness 1 (and U = 1.0).
    assert s["deadline_misses"] >= 1 and s["max_tardiness_ns"] >= 1


def test_overload_misses(cli, tmp_path):
    f = write(tmp_path, [(3, 4, None)] * 3, m=2)  # U = 2.25 > m = 2
    # Over one hyperperiod (4 ns) the third job is still running at the horizon = its deadline:
    # a miss whose tardiness lower bound is 0. Over 40 ns the backlog grows.
    code, out, err = cli("simulate", f, "--json")
    assert code == 0, err
    s = json.loads(out)
    assert s["horizon_ns"] == 4 and s["deadline_misses"] == 1 and s["max_tardiness_ns"] == 0
    for extra in [
        [],
        ["--scheduler", "gedf-quantum", "--quantum", "1ns"],
        ["--scheduler", "gedf-quantum", "--staggered"],
    ]:
        code, out, err = cli("simulate", f, "--horizon", "40ns", "--json", *extra)
        assert code == 0, err
        s = json.loads(out)
        assert s["deadline_misses"] > 3 and s["max_tardiness_ns"] > 0


def test_gedf_and_pedf_differ(cli, tmp_path):
    # Dhall's effect: two light tasks (2, 20) and a heavy one (20, 21) on 2 CPUs. G-EDF runs the
    # light jobs first (earlier deadlines) and the heavy job finishes at 22 > 21; worst-fit
    # partitioning puts the heavy task alone on one CPU and nothing misses.
    f = write(tmp_path, [(2, 20, None), (2, 20, None), (20, 21, None)], m=2)
    code, out, _ = cli("simulate", f, "--scheduler", "gedf", "--json")
    g = json.loads(out)
    code2, out2, _ = cli("simulate", f, "--scheduler", "pedf", "--json")
    p = json.loads(out2)
    assert code == 0 and code2 == 0
    assert g["deadline_misses"] > 0 and g["per_task"][2]["deadline_misses"] > 0
    assert p["deadline_misses"] == 0 and p["migrations"] == 0
    # With an explicit placement putting the heavy task with a light one, P-EDF misses.
    pl = {
        "m": 2,
        "schedulable": True,
        "heuristic": "hand",
        "cpus": [
            {
                "cpu": 0,
                "reservations": [
                    {"task": 0, "budget": 2, "period": 20, "deadline": 20, "offset": 0, "part": 1, "parts": 1},
                    {"task": 2, "budget": 20, "period": 21, "deadline": 21, "offset": 0, "part": 1, "parts": 1},
                ],
            },
            {
                "cpu": 1,
                "reservations": [
                    {"task": 1, "budget": 2, "period": 20, "deadline": 20, "offset": 0, "part": 1, "parts": 1}
                ],
            },
        ],
        "tasks": [{"task": i, "period_ratio": 1, "parts": 1} for i in range(3)],
    }
    pf = tmp_path / "p.json"
    pf.write_text(json.dumps(pl))
    code, out, err = cli("simulate", f, "--scheduler", "pedf", "--placement", pf, "--json")
    assert code == 0, err
    assert json.loads(out)["deadline_misses"] > 0


def test_spres_cascade_and_partition_placement(cli, tmp_path):
    # Three tasks of utilization 2/3 on 2 CPUs: not partitionable, but SP-RES splits one.
    f = write(tmp_path, [(20, 30, None)] * 3, m=2)
    code, _, err = cli("simulate", f, "--scheduler", "pedf", "--json")
    assert code == 1 and "not placed" in err
    code, out, err = cli("simulate", f, "--scheduler", "spres", "--json")
    assert code == 0, err
    s = json.loads(out)
    assert s["deadline_misses"] == 0 and s["migrations"] > 0 and "cascade" in err
    # A placement from `rtsched partition` drives the simulation.
    code, pl, _ = cli("partition", f, "--heuristic", "spres", "--json")
    pf = tmp_path / "pl.json"
    pf.write_text(pl)
    code, out2, _ = cli("simulate", f, "--scheduler", "spres", "--placement", pf, "--json")
    assert code == 0 and json.loads(out2)["deadline_misses"] == 0
    # U > m cannot be placed: exit 1 with the reason.
    g = write(tmp_path, [(3, 4, None)] * 3, m=2, name="over.json")
    code, _, err = cli("simulate", g, "--scheduler", "spres")
    assert code == 1 and "utilization" in err


def test_trace_files(cli, tmp_path):
    f = write(tmp_path, [(2, 5, None), (3, 7, None), (4, 10, None)], m=2)
    paths = {
        k: tmp_path / n
        for k, n in [
            ("trace", "t.jsonl"),
            ("perfetto", "p.json"),
            ("sched", "s.bin"),
            ("csv", "j.csv"),
            ("png", "g.png"),
            ("svg", "g.svg"),
        ]
    }
    code, out, err = cli(
        "simulate",
        f,
        "--json",
        "--trace",
        paths["trace"],
        "--perfetto",
        paths["perfetto"],
        "--sched-trace",
        paths["sched"],
        "--job-csv",
        paths["csv"],
        "--gantt",
        paths["png"],
    )
    assert code == 0, err
    s = json.loads(out)
    lines = [json.loads(x) for x in paths["trace"].read_text().splitlines()]
    assert lines[0]["ev"] == "meta" and lines[0]["m"] == 2 and lines[0]["horizon"] == s["horizon_ns"] == 70
    evs = [x["ev"] for x in lines[1:]]
    assert evs.count("release") == s["jobs"] == 14 + 10 + 7
    assert evs.count("migration") == s["migrations"]
    assert evs.count("deadline_miss") == s["deadline_misses"]
    perf = json.loads(paths["perfetto"].read_text())
    assert isinstance(perf["traceEvents"], list) and perf["traceEvents"]
    runs = sum(1 for e in perf["traceEvents"] if e.get("ph") == "X")
    assert runs == evs.count("run")
    b = paths["sched"].read_bytes()
    assert len(b) > 0 and len(b) % 24 == 0
    csv = paths["csv"].read_text().splitlines()
    assert csv[0].startswith("task,job,release") and len(csv) == 1 + s["jobs"]
    png = paths["png"].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
    code, _, err = cli("simulate", f, "--gantt", paths["svg"])
    assert code == 0, err
    assert "<svg" in paths["svg"].read_text()[:300]


def test_sporadic_and_exec_fraction_are_seeded():
    ts = rtsched.TaskSet([rtsched.Task(wcet=2, period=5), rtsched.Task(wcet=3, period=7)])
    a = rtsched.simulate(ts, 1, horizon=1000, sporadic=4, exec_fraction=0.5, seed=7)
    b = rtsched.simulate(ts, 1, horizon=1000, sporadic=4, exec_fraction=0.5, seed=7)
    c = rtsched.simulate(ts, 1, horizon=1000)
    assert a == b and a["jobs"] < c["jobs"]


def test_horizon_cap_message(cli, tmp_path):
    # Coprime periods of ~1 s: the hyperperiod is far beyond the 1000 s cap.
    f = write(tmp_path, [(1, 999_999_937, None), (1, 999_999_929, None)], m=1)
    code, out, err = cli("simulate", f, "--json")
    assert code == 0, err
    s = json.loads(out)
    assert s["horizon_capped"] is True and s["horizon_ns"] == 1_000_000_000_000 and s["horizon_message"]
    assert "capped" in err


def test_rtws_on_one_thread_jobs_matches_gedf(cli, tmp_path):
    # With one region of one thread per job, RTWS's rules reduce to global EDF (seed 003 §V).
    f = write(tmp_path, SMALL, m=1)
    a = json.loads(cli("simulate", f, "--scheduler", "rtws", "--json")[1])
    b = json.loads(cli("simulate", f, "--scheduler", "gedf", "--json")[1])
    for k in ["jobs", "deadline_misses", "max_response_time_ns", "preemptions"]:
        assert a[k] == b[k], k


@pytest.mark.parametrize(
    "args, words",
    [
        (["--scheduler", "edf-magic"], ["scheduler", "edf-magic"]),
        (["--scheduler", "gedf", "--quantum", "1ms"], ["quantum"]),
        (["--horizon", "ten"], ["horizon"]),
        (["--gantt", "x.pdf"], ["gantt"]),
        (["--exec-fraction", "1.5"], ["exec-fraction", "(0.0, 1.0]"]),
    ],
)
def test_bad_input_exits_2(cli, tmp_path, args, words):
    f = write(tmp_path, SMALL, m=1)
    code, out, err = cli("simulate", f, *args)
    assert code == 2 and out == ""
    for w in words:
        assert w in err, err


def test_missing_m_and_foreign_placement_exit_2(cli, tmp_path):
    f = write(tmp_path, SMALL)
    code, _, err = cli("simulate", f)
    assert code == 2 and "'m'" in err
    # A placement written for a three-task set does not fit this two-task set.
    g = write(tmp_path, [(20, 30, None)] * 3, m=2, name="three.json")
    _, pl, _ = cli("partition", g, "--heuristic", "spres", "--json")
    pf = tmp_path / "pl.json"
    pf.write_text(pl)
    code, _, err = cli("simulate", f, "--m", 2, "--scheduler", "spres", "--placement", pf)
    assert code == 2 and "task" in err
    code, _, err = cli("simulate", g, "--m", 3, "--scheduler", "spres", "--placement", pf)
    assert code == 2 and "'m'" in err
    code, _, err = cli("simulate", g, "--scheduler", "pedf", "--placement", pf)
    assert code == 2 and "placement" in err
    code, _, err = cli("simulate", g, "--scheduler", "pedf", "--placement", tmp_path / "nope.json")
    assert code == 2 and "placement" in err
    with pytest.raises(rtsched.RtschedError, match="scheduler"):
        rtsched.simulate(rtsched.TaskSet([rtsched.Task(wcet=1, period=2)]), 1, scheduler="nope")


def test_spres_soft_and_cash_flags(cli, tmp_path):
    # One task (C 6, T 10) in a reservation of budget 2 per 10: hard, each job gets 2 per
    # window and misses; soft, the depleted reservation is served in background and finishes at 6.
    f = write(tmp_path, [(6, 10, None)], m=1)
    pl = {
        "m": 1,
        "schedulable": True,
        "heuristic": "hand",
        "cpus": [
            {
                "cpu": 0,
                "reservations": [
                    {"task": 0, "budget": 2, "period": 10, "deadline": 10, "offset": 0, "part": 1, "parts": 1}
                ],
            }
        ],
        "tasks": [{"task": 0, "period_ratio": 1, "parts": 1}],
    }
    pf = tmp_path / "p.json"
    pf.write_text(json.dumps(pl))
    code, out, err = cli("simulate", f, "--scheduler", "spres", "--placement", pf, "--horizon", "40ns", "--json")
    assert code == 0, err
    assert json.loads(out)["deadline_misses"] > 0
    code, out, err = cli(
        "simulate", f, "--scheduler", "spres", "--placement", pf, "--horizon", "40ns", "--soft", "--json"
    )
    assert code == 0, err
    s = json.loads(out)
    assert s["deadline_misses"] == 0 and s["max_response_time_ns"] == 6
    # CASH on a cascade placement with under-running jobs: accepted sets still meet every deadline.
    g = write(tmp_path, [(20, 30, None)] * 3, m=2, name="g.json")
    code, out, err = cli("simulate", g, "--scheduler", "spres", "--cash", "--exec-fraction", "0.5", "--json")
    assert code == 0, err
    assert json.loads(out)["deadline_misses"] == 0
    # The flags belong to spres only.
    code, _, err = cli("simulate", g, "--scheduler", "gedf", "--cash")
    assert code == 2 and "cash" in err and "spres" in err


def test_a_placement_for_a_global_scheduler_is_refused_before_the_file_is_read(cli, tmp_path):
    """--placement with a scheduler that takes none says so, even when the file is itself bad;
    with a partitioned scheduler the file's own error is reported."""
    f = write(tmp_path, SMALL, m=1)
    bad = tmp_path / "bad.json"
    bad.write_text('{"cpus": 3}')
    code, _, err = cli("simulate", f, "--scheduler", "gedf", "--placement", bad)
    assert code == 2 and "field 'placement': applies only to pedf, pfp and spres, not gedf" in err, err
    code, _, err = cli("simulate", f, "--scheduler", "pedf", "--placement", bad)
    assert code == 2 and "applies only" not in err and "placement" in err, err
