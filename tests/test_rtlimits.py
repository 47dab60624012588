"""What this machine lets a run use (rtsched.rtlimits; issue 24, "Placements that fit the
machine"): the SCHED_FIFO share of a CPU from the kernel's limits, each CPU's load under a
placement, the warning `run` prints when a placement loads a CPU above the share, and the
advice of the mechanisms that need a CPU of their own."""

import json
import os
from fractions import Fraction

import pytest
import rtsched
from rtsched import rtlimits
from rtsched import runtime as rt

CPUS = sorted(os.sched_getaffinity(0))


def proc(tmp_path, runtime, period=1_000_000):
    d = tmp_path / "proc"
    d.mkdir(exist_ok=True)
    (d / "sched_rt_runtime_us").write_text(f"{runtime}\n")
    (d / "sched_rt_period_us").write_text(f"{period}\n")
    return d


def test_the_share_follows_the_kernels_limits(tmp_path):
    nofair = tmp_path / "nofair"
    old = rtlimits.fifo_capacity(proc(tmp_path, 950_000), "6.1.0-18-amd64", nofair)
    assert old["share"] == Fraction(95, 100) and old["fair"] is None
    assert "sched_rt_runtime_us 950000 / sched_rt_period_us 1000000 = 95.0%" in old["text"]
    # Linux >= 6.12: the fair server's default 50 ms per 1 s, or what debugfs says.
    new = rtlimits.fifo_capacity(proc(tmp_path, 950_000), "6.18.44-fc", nofair)
    assert new["share"] == Fraction(95, 100) and new["fair"] == (50_000_000, 1_000_000_000, "the default")
    assert "fair server" in new["text"]
    fair = tmp_path / "fair" / "cpu0"
    fair.mkdir(parents=True)
    (fair / "runtime").write_text("100000000\n")
    (fair / "period").write_text("1000000000\n")
    tuned = rtlimits.fifo_capacity(proc(tmp_path, 950_000), "6.12.1", tmp_path / "fair")
    assert tuned["share"] == Fraction(9, 10) and "100 ms every 1000 ms" in tuned["text"]
    # -1 lifts RT throttling: no limit before 6.12, the fair server's after.
    assert rtlimits.fifo_capacity(proc(tmp_path, -1), "6.1.0", nofair)["share"] is None
    assert rtlimits.fifo_capacity(proc(tmp_path, -1), "6.13.0", nofair)["share"] == Fraction(95, 100)
    gone = rtlimits.fifo_capacity(tmp_path / "missing", "6.1.0", nofair)
    assert gone["share"] is None and "could not be read" in gone["text"]


def spres_fig1():
    return rtsched.load(os.path.join(os.path.dirname(rtsched.__file__), "data", "spres-fig1.json"))


def test_loads_of_each_kind_of_placement():
    ts = rtsched.TaskSet([rtsched.Task(wcet=w, period=10) for w in (5, 4, 3)])
    assert rtlimits.placement_loads(ts, [4, 7], partition=[[0, 2], [1]]) == {4: Fraction(8, 10), 7: Fraction(4, 10)}
    assert rtlimits.placement_loads(ts, [0, 1]) == {0: Fraction(6, 10), 1: Fraction(6, 10)}
    fig1 = spres_fig1()
    p = rtsched.partition(fig1, 2, "spres")
    loads = rtlimits.placement_loads(fig1, [0, 1], reservations=json.dumps(p))
    expect = {i: sum(Fraction(r["budget"], r["period"]) for r in c["reservations"]) for i, c in enumerate(p["cpus"])}
    assert loads == expect and max(loads.values()) > Fraction(95, 100)


def test_the_warning_names_the_cpus_and_the_numbers(tmp_path):
    cap = rtlimits.fifo_capacity(proc(tmp_path, 950_000), "6.1.0", tmp_path / "none")
    w = rtlimits.overloaded({0: Fraction(992, 1000), 1: Fraction(9, 10)}, cap)
    assert w is not None and "CPU 0 to 99.2%" in w and "CPU 1" not in w
    assert "above the 95.0% of each CPU that SCHED_FIFO threads get here" in w
    assert "sched_rt_runtime_us 950000" in w and "kernel.sched_rt_runtime_us=-1" in w
    assert "higher-priority threads or interrupts" not in w
    assert rtlimits.overloaded({0: Fraction(95, 100)}, cap) is None  # at the share: fits
    assert rtlimits.overloaded({0: Fraction(1)}, {"share": None, "text": ""}) is None
    spread = rtlimits.overloaded({0: Fraction(97, 100), 1: Fraction(97, 100)}, cap, spread=True)
    assert spread is not None and "utilization per CPU is 97.0%" in spread


class _Stop(Exception):
    pass


class _NoRun:
    """The extension module with `run` replaced: the warning comes before any thread starts."""

    def __getattr__(self, name):
        return getattr(rtsched._core, name)

    def run(self, *a, **kw):
        raise _Stop


def test_run_warns_before_the_run_when_the_placement_is_above_the_share(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(rt, "_core", _NoRun())
    real = rtlimits.fifo_capacity
    monkeypatch.setattr(rtlimits, "fifo_capacity", lambda: real(proc(tmp_path, 950_000), "6.1.0", tmp_path / "x"))
    heavy = rtsched.TaskSet([rtsched.Task(wcet=97, period=100)])
    with pytest.raises(_Stop):
        rt.run_raw(heavy, scheduler="pedf", cpus=[CPUS[0]], duration="10ms", rt_priority=50)
    err = capsys.readouterr().err
    assert f"warning: the placement loads CPU {CPUS[0]} to 97.0%, above the 95.0%" in err
    # At normal priority the kernel's SCHED_FIFO limit does not apply: no warning.
    with pytest.raises(_Stop):
        rt.run_raw(heavy, scheduler="pedf", cpus=[CPUS[0]], duration="10ms")
    assert "SCHED_FIFO threads get here" not in capsys.readouterr().err
    light = rtsched.TaskSet([rtsched.Task(wcet=90, period=100)])
    with pytest.raises(_Stop):
        rt.run_raw(light, scheduler="pedf", cpus=[CPUS[0]], duration="10ms", rt_priority=50)
    assert "SCHED_FIFO threads get here" not in capsys.readouterr().err


def test_a_dsp_that_never_sleeps_is_warned_about_with_the_numbers(monkeypatch, tmp_path, capsys):
    """G-EDF-MP's dsp=spin under SCHED_FIFO while the kernel throttles it (docs/mechanisms/gedf-mp.md)."""
    if len(CPUS) < 2:
        pytest.skip("needs two CPUs (a client and the scheduling processor)")
    monkeypatch.setattr(rt, "_core", _NoRun())
    real = rtlimits.fifo_capacity
    monkeypatch.setattr(rtlimits, "fifo_capacity", lambda: real(proc(tmp_path, 950_000), "6.1.0", tmp_path / "x"))
    light = rtsched.TaskSet([rtsched.Task(wcet=10, period=100)])
    kw = {"scheduler": "gedf-mp", "cpus": [CPUS[1]], "dedicated_cpu": CPUS[0], "duration": "10ms"}
    with pytest.raises(_Stop):
        rt.run_raw(light, rt_priority=50, params={"dsp": "spin"}, **kw)
    err = capsys.readouterr().err
    assert f"the scheduling processor (dsp=spin) on CPU {CPUS[0]} never sleeps" in err
    assert "only 95.0% of a CPU here" in err and "--isolate" in err
    for other in ({"dsp": "window"}, {"dsp": "sleep"}):
        with pytest.raises(_Stop):
            rt.run_raw(light, rt_priority=50, params=other, **kw)
        assert "never sleeps" not in capsys.readouterr().err
    # Throttling lifted (as --isolate leaves it): nothing to warn about.
    monkeypatch.setattr(rtlimits, "fifo_capacity", lambda: real(proc(tmp_path, -1), "6.1.0", tmp_path / "x"))
    with pytest.raises(_Stop):
        rt.run_raw(light, rt_priority=50, params={"dsp": "spin"}, **kw)
    assert "never sleeps" not in capsys.readouterr().err


def test_spinning_workers_are_warned_about_with_the_numbers(monkeypatch, tmp_path, capsys):
    """idle="spin" (G-EDF-MP's spinning clients, docs/mechanisms/gedf-mp.md "Waiting") under
    SCHED_FIFO while the kernel throttles it: the same warning as dsp=spin, one per kind of
    spinning thread, naming the workers' CPUs."""
    monkeypatch.setattr(rt, "_core", _NoRun())
    real = rtlimits.fifo_capacity
    monkeypatch.setattr(rtlimits, "fifo_capacity", lambda: real(proc(tmp_path, 950_000), "6.1.0", tmp_path / "x"))
    light = rtsched.TaskSet([rtsched.Task(wcet=10, period=100)])
    with pytest.raises(_Stop):
        rt.run_raw(light, scheduler="pedf", cpus=[CPUS[0]], duration="10ms", rt_priority=50, idle="spin")
    err = capsys.readouterr().err
    assert f"the worker (idle=spin) on CPU {CPUS[0]} never sleeps" in err
    assert "only 95.0% of a CPU here" in err and "--isolate" in err and "--idle sleep" in err
    # Sleeping workers, or normal priority: nothing to warn about.
    for kw in ({"rt_priority": 50, "idle": "sleep"}, {"idle": "spin"}):
        with pytest.raises(_Stop):
            rt.run_raw(light, scheduler="pedf", cpus=[CPUS[0]], duration="10ms", **kw)
        assert "never sleep" not in capsys.readouterr().err
    if len(CPUS) >= 2:
        # G-EDF-MP with nothing that sleeps: the scheduling processor and the clients, each named.
        kw = {"scheduler": "gedf-mp", "cpus": [CPUS[1]], "dedicated_cpu": CPUS[0], "duration": "10ms"}
        with pytest.raises(_Stop):
            rt.run_raw(light, rt_priority=50, params={"dsp": "spin"}, idle="spin", **kw)
        err = capsys.readouterr().err
        assert err.count("never sleeps") == 2
        assert f"the scheduling processor (dsp=spin) on CPU {CPUS[0]} never sleeps" in err
        assert f"the worker (idle=spin) on CPU {CPUS[1]} never sleeps" in err
    # Throttling lifted (as --isolate leaves it before Linux 6.12): no warning.
    monkeypatch.setattr(rtlimits, "fifo_capacity", lambda: real(proc(tmp_path, -1), "6.1.0", tmp_path / "x"))
    with pytest.raises(_Stop):
        rt.run_raw(light, scheduler="pedf", cpus=[CPUS[0]], duration="10ms", rt_priority=50, idle="spin")
    assert "never sleep" not in capsys.readouterr().err


def test_the_spinning_warning_names_several_cpus(tmp_path):
    cap = rtlimits.fifo_capacity(proc(tmp_path, 950_000), "6.1.0", tmp_path / "none")
    w = rtlimits.spinning(cap, "the workers (idle=spin)", [2, 3], "every job", "use --idle sleep")
    assert w is not None and w.startswith("the workers (idle=spin) on CPUs 2, 3 never sleep, but")
    assert "stop them for the rest of each period" in w and w.endswith("or use --idle sleep")
    assert rtlimits.spinning(cap, "x", [], "y", "z") is None
    assert rtlimits.spinning({"share": None, "text": ""}, "x", [0], "y", "z") is None


# The advice's wording (which CPU to dedicate, what m fits the others) is checked where it is
# made: crates/runtime/src/request.rs, `dedicated_advice_says_what_runs_here`.


def test_run_refuses_with_the_advice(cli, tmp_path):
    f = tmp_path / "two.json"
    f.write_text(json.dumps({"m": 2, "tasks": [{"wcet": "2ms", "period": "10ms"}, {"wcet": "3ms", "period": "20ms"}]}))
    code, out, err = cli("run", f, "--scheduler", "cq1", "--duration", "10ms")
    assert code == 2 and len(err.splitlines()) == 1
    assert "needs a CPU of its own for release handling (--dedicated-cpu N" in err and "m ≤" in err
    if len(CPUS) >= 2:
        code, out, err = cli("run", f, "--scheduler", "cq1", "--duration", "10ms", "--dedicated-cpu", CPUS[1])
        assert code == 2 and f"give a task set for m ≤ {len(CPUS) - 1} (with --dedicated-cpu {CPUS[1]}" in err
