"""`rtsched run` runs on the CPUs the task set asks for, refuses a set too big for them (or runs
it with --force and a warning), and says whether its measured timing can be trusted. Real runs
of <= 0.1 s; no timing is asserted (the trust verdict is checked for consistency on real runs
and exactly on constructed summaries)."""

import json
import os

import pytest
import rtsched
from rtsched import calibrate
from rtsched.runtime import TRUST_FACTOR, TRUST_FLOOR_NS, assess_timing, find_scheduler, format_summary, run_cpus

ALL = sorted(os.sched_getaffinity(0))


def tasks(*ct_ms):
    return [rtsched.Task(wcet=f"{c}ms", period=f"{t}ms") for c, t in ct_ms]


def light(m=None):
    return rtsched.TaskSet(tasks((1, 10), (1, 20)), m=m)


def test_without_cpus_the_files_m_decides():
    assert run_cpus(light(), None) == ([ALL[0]], [])  # no m: one CPU, as before
    assert run_cpus(light(m=1), None) == ([ALL[0]], [])
    if len(ALL) >= 2:
        assert run_cpus(light(m=2), None) == (ALL[:2], [])
        # The dedicated CPU is not one of the m.
        assert run_cpus(light(m=1), None, dedicated_cpu=ALL[0]) == ([ALL[1]], [])
    s = rtsched.run(light(m=1), scheduler="gsn-edf", duration="50ms")
    assert s["cpus"] == [ALL[0]] and s["m"] == 1
    # Only the timing warning and its causes, if any.
    assert len(s["warnings"]) == (0 if s["trustworthy"] else 1 + len(s["trust_causes"]))


def test_a_set_made_for_more_cpus_is_refused_with_the_numbers():
    big = light(m=len(ALL) + 2)
    with pytest.raises(rtsched.RtschedError) as e:
        run_cpus(big, None)
    msg = str(e.value)
    assert f"m = {len(ALL) + 2} CPUs" in msg and f"may use {len(ALL)}" in msg and "--force" in msg
    with pytest.raises(rtsched.RtschedError, match=rf"made for m = 3 CPUs, but the run has 1 CPU \({ALL[0]}\)"):
        run_cpus(light(m=3), [ALL[0]])
    # Forced: every allowed CPU, with a warning that names the numbers.
    cpus, warns = run_cpus(big, None, force=True)
    assert cpus == ALL and len(warns) == 1
    assert f"m = {len(ALL) + 2}" in warns[0] and "--force" in warns[0]


def test_utilization_above_the_cpus_is_refused_exactly():
    # U = 1/3 + 2/3 = 1 exactly fits one CPU (exact arithmetic: no float rounding pushes it over).
    exact = rtsched.TaskSet(tasks((1, 3), (2, 3)))
    assert run_cpus(exact, [ALL[0]]) == ([ALL[0]], [])
    over = rtsched.TaskSet([*tasks((1, 3), (2, 3)), rtsched.Task(wcet=1, period="1s")])
    with pytest.raises(rtsched.RtschedError, match=r"utilization U = 1 > 1, but the run has 1 CPU"):
        run_cpus(over, [ALL[0]])
    assert len(run_cpus(over, [ALL[0]], force=True)[1]) == 1


def test_utilization_at_most_is_exact():
    # 1/3 + 1/3 + 1/3 is exactly 1 (its float sum is not); one ns more on a 1 s period is over.
    thirds = rtsched.TaskSet([rtsched.Task(wcet=1, period=3)] * 3)
    assert thirds.utilization_at_most(1) and not thirds.utilization_at_most(0)
    thirds.append(rtsched.Task(wcet=1, period="1s"))
    assert not thirds.utilization_at_most(1) and thirds.utilization_at_most(2)
    with pytest.raises(rtsched.RtschedError, match="argument 'm': expected an integer"):
        thirds.utilization_at_most(1.5)


def test_a_run_too_big_for_its_trace_is_refused_before_it_starts(cli, tmp_path):
    # 100,000 tasks released at 0 and again each second: 100,000 jobs in 1 s, more than one CPU's
    # trace buffer holds at 3 records a job. Refused in one line with the numbers (it used to run
    # for a minute and sum up to "jobs 0, timing trustworthy").
    f = tmp_path / "big.json"
    f.write_text(json.dumps({"tasks": [{"wcet": 5_000, "period": 1_000_000_000}] * 100_000}))
    code, out, err = cli("run", f, "--scheduler", "gsn-edf", "--duration", "1s", "--cpus", str(ALL[0]))
    assert code == 2 and out == "", err
    assert len(err.strip().splitlines()) == 1, err
    assert "100000 tasks would release 100000 jobs in 1 s, more than the run's trace can hold" in err
    assert "shorter duration" in err and "Traceback" not in err


def test_a_run_that_dropped_trace_records_is_never_trustworthy():
    entry = find_scheduler("gsn-edf")
    quiet = summary(0, 0)
    assert assess_timing(quiet, entry, None)[0]
    quiet.update(dropped_records=1_947_100, metrics_horizon_ns=2_000_000, duration_ns=1_000_000_000, jobs=0)
    ok, why = assess_timing(quiet, entry, None)
    assert not ok
    assert why.startswith("the run dropped 1947100 trace records") and "only its first 2 ms of 1 s" in why
    assert "--rt-priority" not in why  # not the host's fault
    # Disturbed as well: both causes, the lost records first.
    ok, why = assess_timing({**quiet, "max_poll_gap_ns": 50_000_000}, entry, None)
    assert not ok and why.startswith("the run dropped") and "between two polls" in why
    # The table says it next to the job counts.
    table = format_summary({**quiet, "trustworthy": ok, "trustworthy_reason": why})
    assert "counted over the first 2 ms only: 1947100 trace records dropped" in table
    assert "timing NOT trustworthy: the run dropped" in table


def test_cli_refuses_in_one_line_and_force_runs_with_a_warning(cli, tmp_path):
    f = tmp_path / "ts.json"
    rtsched.save(str(f), rtsched.TaskSet(tasks((6, 10), (9, 10)), m=4))  # U = 1.5, made for m = 4
    code, out, err = cli("run", f, "--scheduler", "gsn-edf", "--cpus", ALL[0], "--duration", "50ms")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "m = 4 CPUs and has utilization U = 1.5 > 1" in err and "--force" in err
    code, out, err = cli(
        "run", f, "--scheduler", "gsn-edf", "--cpus", ALL[0], "--duration", "50ms", "--force", "--json"
    )
    assert code == 0, err
    s = json.loads(out)
    assert "rtsched run: warning: the task set is made for m = 4 CPUs" in err
    assert s["warnings"][0] in err and s["deadline_misses"] > 0


def summary(gap, timer, schedule=2_000, release=3_000, ipi=0):
    st = lambda v: {"count": 1, "avg_ns": float(v), "p50_ns": v, "p99_ns": v, "max_ns": v}  # noqa: E731
    ov = {"release": st(release), "release_event": st(timer), "schedule": st(schedule), "ipi": st(ipi)}
    return {"max_poll_gap_ns": gap, "overheads": ov}


def test_trust_compares_poll_gaps_and_timer_latency_with_the_reaction_time():
    entry = find_scheduler("gsn-edf")
    limit = TRUST_FACTOR * TRUST_FLOOR_NS  # the reaction (5 us) is below the floor
    ok, why = assess_timing(summary(limit, limit, ipi=limit), entry, None)
    assert ok and "within" in why
    ok, why = assess_timing(summary(0, 0, ipi=limit + 1), entry, 50)
    assert not ok and "to be noticed" in why  # a wake-up is host latency, not the mechanism's reaction
    ok, why = assess_timing(summary(limit + 1, 0), entry, None)
    assert not ok and "between two polls" in why and "--rt-priority" in why and "late" not in why
    ok, why = assess_timing(summary(0, 5_000_000), entry, 50)
    assert not ok and "timer fired 5 ms late" in why and "SCHED_FIFO priority 50" in why and "--rt-priority" not in why
    # The run's own maxima never raise the limit (the interference inflates them too): the
    # reaction comes from the mechanism's model (tests/test_trust.py), not from the run.
    slow = summary(limit + 1, 0, schedule=200_000, release=100_000)
    assert not assess_timing(slow, entry, None)[0]


def test_a_worker_that_never_ran_is_caught_by_the_longest_priority_inversion():
    # No poll gap, no late timer, no Δipi sample (nothing ran to record them), but a ready job
    # waited 94 ms beside an idle CPU: seen on this machine while another run held both CPUs.
    entry = find_scheduler("gsn-edf")
    limit = TRUST_FACTOR * TRUST_FLOOR_NS
    quiet = summary(0, 0)
    for bound, longest, ok in (
        (100_000, 94_000_000, False),
        (100_000, TRUST_FACTOR * 100_000, False),  # the run's own tracking bound does not raise the limit
        (1_000, limit, True),  # the limit: 10x the timer floor (plus a model's reaction)
        (1_000, limit + 1, False),
    ):
        quiet["priority_inversion"] = {"max_interval_ns": longest, "tracking_bound_ns": bound}
        got, why = assess_timing(quiet, entry, 50)
        assert got == ok, (bound, longest, why)
        assert ok or "a ready job waited" in why
    # A quantum-driven mechanism may hold a release back for one quantum on top.
    quiet["params"] = {"quantum": 3_000_000}
    quiet["priority_inversion"] = {"max_interval_ns": limit + 3_000_000, "tracking_bound_ns": 100_000}
    assert assess_timing(quiet, find_scheduler("cqm"), 50)[0]
    quiet["priority_inversion"]["max_interval_ns"] += 1
    assert not assess_timing(quiet, find_scheduler("cqm"), 50)[0]


def test_every_run_says_whether_its_timing_is_trustworthy(cli, tmp_path):
    f = tmp_path / "ts.json"
    rtsched.save(str(f), light(m=1))
    code, out, err = cli("run", f, "--scheduler", "gsn-edf", "--duration", "100ms", "--json")
    assert code == 0, err
    s = json.loads(out)
    assert isinstance(s["trustworthy"], bool) and s["rt_priority"] is None
    # The same verdict again from the summary, the kept calibration and the shipped model.
    cal, _ = calibrate.load()
    if cal is not None:
        again = assess_timing(s, find_scheduler("gsn-edf"), None, cal, calibrate.reaction_model("gsn-edf"))
        assert (s["trustworthy"], s["trustworthy_reason"]) == again
    warned = "not trustworthy" in err
    assert warned == (not s["trustworthy"]) and warned == ("--rt-priority" in err)
    # The table says it too.
    code, out, err = cli("run", f, "--scheduler", "gsn-edf", "--duration", "50ms")
    assert code == 0 and ("timing trustworthy:" in out or "timing NOT trustworthy:" in out)
