"""pedf and pfp without a placement: one helper (`_core.default_partition`) decides the partition
for both `rtsched run` and `rtsched simulate` — worst-fit decreasing with the scheduler's own exact
admission test (EDF for pedf, deadline-monotonic FP for pfp)."""

import json
import os

import rtsched
from rtsched import _core

CPU = sorted(os.sched_getaffinity(0))[0]


def edf_only():
    """U = 1 on one processor: EDF admits it; deadline-monotonic FP does not (τ1's response time
    is 3 + 2·⌈7/4⌉ = 7 > 6)."""
    return rtsched.TaskSet([rtsched.Task(wcet=2, period=4), rtsched.Task(wcet=3, period=6)])


def write_set(tmp_path, ts):
    f = tmp_path / "ts.json"
    f.write_text(ts.to_json())
    return f


def test_the_helper_uses_the_schedulers_admission_test():
    ts = edf_only()
    pedf = _core.default_partition(ts, "pedf", 1)
    assert pedf["partition"] == [[0, 1]] and pedf["reason"] is None and "EDF" in pedf["note"]
    pfp = _core.default_partition(ts, "pfp", 1)
    assert pfp["partition"] is None and pfp["note"] == ""
    assert "deadline-monotonic FP" in pfp["reason"] and "cannot place task 1" in pfp["reason"]
    # Two processors: both place one task per processor (worst fit spreads them).
    assert sorted(_core.default_partition(ts, "pfp", 2)["partition"]) == [[0], [1]]


def test_run_and_simulate_agree_on_the_pfp_default(cli, tmp_path):
    f = write_set(tmp_path, edf_only())
    reason = _core.default_partition(edf_only(), "pfp", 1)["reason"]
    # simulate: not placed (exit 1), with the helper's reason
    code, out, err = cli("simulate", f, "--m", 1, "--scheduler", "pfp")
    assert code == 1 and reason in err, err
    # run: refused before any thread starts, with the same reason
    code, out, err = cli("run", f, "--scheduler", "pfp", "--cpus", CPU, "--duration", "50ms")
    assert code == 2 and reason in err and "pass --placement or more CPUs" in err, err
    # pedf places the set in both, and both say how
    code, out, err = cli("simulate", f, "--m", 1, "--scheduler", "pedf", "--json")
    assert code == 0 and json.loads(out)["deadline_misses"] == 0
    assert "no --placement given: partitioned by worst-fit decreasing utilization with exact EDF (QPA) admission" in err
    note = _core.default_partition(edf_only(), "pedf", 1)["note"]
    assert note in err


def test_bad_requests_are_refused():
    import pytest

    with pytest.raises(rtsched.RtschedError, match="no default partition"):
        _core.default_partition(edf_only(), "gedf", 2)
    with pytest.raises(rtsched.RtschedError, match="1..=16384"):
        _core.default_partition(edf_only(), "pedf", 0)


def test_partition_defaults_to_the_placement_run_and_simulate_use(cli, tmp_path):
    """`rtsched partition` without --heuristic places a set as `run` and `simulate` place it
    under pedf without --placement (one placement per set), and says it used the default."""
    ts = rtsched.TaskSet(
        [rtsched.Task(wcet=w, period=p) for w, p in ((5, 10), (4, 10), (3, 10), (2, 10), (6, 20), (1, 10))]
    )
    f = write_set(tmp_path, ts)
    code, out, err = cli("partition", f, "--m", 3, "--json")
    assert code == 0, err
    placed = json.loads(out)
    assert placed["heuristic"] == rtsched.api.DEFAULT_PARTITION_METHOD == "pedf_wfd"
    mine = sorted(sorted(r["task"] for r in c["reservations"]) for c in placed["cpus"])
    theirs = sorted(sorted(c) for c in _core.default_partition(ts, "pedf", 3)["partition"])
    assert mine == theirs
    # First fit would have placed this set differently: the default is not first fit.
    ffd = rtsched.partition(ts, 3, "pedf_ffd")
    assert sorted(sorted(r["task"] for r in c["reservations"]) for c in ffd["cpus"]) != mine
    code, out, err = cli("partition", f, "--m", 3)
    default = "(the default, as run and simulate place pedf; --heuristic picks another)"
    assert code == 0 and out.splitlines()[0].endswith(default)
    code, out, err = cli("partition", f, "--m", 3, "--heuristic", "pedf_wfd")
    assert code == 0 and "the default" not in out


def test_a_partition_of_arbitrary_deadlines_reads_back_as_a_placement(cli, tmp_path):
    # τ0 has D = 15 ms > T = 10 ms. `partition --json` writes each whole task as one reservation
    # whose deadline is at most its period (as the model's Placement builds them), so the file
    # is a valid placement for `rtsched run --placement` (it wrote deadline 15 ms before, which
    # the reader refuses: a deadline above the period).
    ts = rtsched.TaskSet(
        [rtsched.Task(wcet="2ms", period="10ms", deadline="15ms"), rtsched.Task(wcet="3ms", period="10ms")]
    )
    f = write_set(tmp_path, ts)
    code, out, err = cli("partition", f, "--m", 2, "--heuristic", "pedf_ffd", "--json")
    assert code == 0, err
    p = json.loads(out)
    assert {r["task"]: r["deadline"] for c in p["cpus"] for r in c["reservations"]}[0] == 10_000_000
    cpus = _core.placement_partition(ts, out, 2)
    assert sorted(i for c in cpus for i in c) == [0, 1]
