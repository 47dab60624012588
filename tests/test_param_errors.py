"""One reading of a scheduler's parameters (``rtsched_model::params``): the same unknown or bad
parameter reads the same one line whichever engine's Python entry receives it — simulate, run,
measure-overheads, and analyze for the priorities (docs/cli.md, "Scheduler parameters").

Every bad parameter here is refused before anything runs: no run starts, no preflight is taken,
nothing is written."""

import os

import pytest
import rtsched
from rtsched import runtime

TS = rtsched.loads('{"m": 2, "tasks": [{"wcet": "1ms", "period": "10ms"}, {"wcet": "2ms", "period": "20ms"}]}', "json")


def _message(call) -> str:
    with pytest.raises(rtsched.RtschedError) as e:
        call()
    msg = str(e.value)
    assert len(msg.splitlines()) == 1, msg
    return msg


def _engines(sim_scheduler: str, run_scheduler: str, params: dict, out: str) -> dict[str, str]:
    """The message of each engine's Python entry for ``params``."""
    return {
        "simulate": _message(lambda: rtsched.simulate(TS, scheduler=sim_scheduler, params=params, horizon="20ms")),
        "run": _message(lambda: runtime.run(TS, scheduler=run_scheduler, params=params, duration="1ms", cpus=[0])),
        "measure-overheads": _message(
            lambda: runtime.measure_overheads(run_scheduler, params=params, out=out, quick=True, cpus=[0])
        ),
    }


UNIT = 'duration "10" has no unit: write the integer 10 for nanoseconds, or add a unit ("10ns", "10us", "10ms", "10s")'


@pytest.mark.parametrize(
    "scheduler, params, want",
    [
        ("spres", {"rr_quantum": "10"}, f"spres: parameter rr_quantum: {UNIT}"),
        ("spres", {"rr_quantum": 0}, "spres: parameter rr_quantum: must be at least 1 ns, got 0"),
        (
            "spres",
            {"background": "sideways"},
            'spres: parameter background: expected one of round-robin, earliest-end, got "sideways"',
        ),
        (
            "spres",
            {"cash": "maybe"},
            'spres: parameter cash: expected true or false (or yes/no, on/off, 1/0), got "maybe"',
        ),
        ("spres", {"suspension": "lend"}, 'spres: parameter suspension: expected one of keep, donate, got "lend"'),
        ("pedf", {"foo": "1"}, "pedf: parameter foo: unknown to pedf (it takes none)"),
        ("spres", {"rr-quantum": "2ms", "rr_quantum": "1ms"}, "spres: parameter rr_quantum: given twice; give it once"),
    ],
)
def test_a_bad_parameter_reads_the_same_in_every_engine(tmp_path, scheduler, params, want):
    out = str(tmp_path / "model")
    got = _engines(scheduler, scheduler, params, out)
    assert got == {engine: want for engine in got}
    assert not os.path.exists(out)  # refused before the measurement made its folder


@pytest.mark.parametrize(
    "text, reason",
    [
        ("x", 'dm, rm or one integer rank per task, got "x"'),
        ("1,x", 'task 1: "x" is not a rank (dm, rm or one integer rank per task, smaller = higher)'),
        ("0,-1", 'task 1: "-1" is not a rank (dm, rm or one integer rank per task, smaller = higher)'),
    ],
)
def test_bad_priorities_read_the_same_in_every_engine(tmp_path, text, reason):
    # The simulator's fixed-priority scheduler is gfp, the runtime's pfp; analyze has no
    # scheduler (and names the set of its batch): the parameter's line is the same.
    got = _engines("gfp", "pfp", {"priorities": text}, str(tmp_path / "model"))
    line = f"parameter priorities: {reason}"
    assert got == {"simulate": f"gfp: {line}", "run": f"pfp: {line}", "measure-overheads": f"pfp: {line}"}
    assert _message(lambda: rtsched.analyze(TS, priorities=text)) == f"task set 0: {line}"


def test_a_parameter_of_another_scheduler_names_the_schedulers_that_take_it():
    sim = _message(lambda: rtsched.simulate(TS, scheduler="gedf", params={"quantum": "1ms"}, horizon="20ms"))
    assert sim == "gedf: parameter quantum: applies only to --scheduler gedf-quantum, llf, pd2, not gedf"
    run = _message(lambda: runtime.run(TS, scheduler="gsn-edf", params={"priorities": "rm"}, duration="1ms"))
    assert run == "gsn-edf: parameter priorities: applies only to --scheduler pfp, push-pull-fp, not gsn-edf"


def test_the_command_line_reads_the_same_line(cli, tmp_path):
    f = tmp_path / "ts.json"
    f.write_text('{"m": 2, "tasks": [{"wcet": "1ms", "period": "10ms"}, {"wcet": "2ms", "period": "20ms"}]}')
    want = f"spres: parameter rr_quantum: {UNIT}"
    for args in (
        ["simulate", str(f), "--scheduler", "spres", "--param", "rr_quantum=10"],
        ["run", str(f), "--scheduler", "spres", "--param", "rr_quantum=10", "--duration", "1ms", "--cpus", "0"],
        ["measure-overheads", "--scheduler", "spres", "--rr-quantum", "10", "--quick", "--out", str(tmp_path / "m")],
    ):
        code, out, err = cli(*args)
        assert code == 2 and err.strip().endswith(want) and len(err.splitlines()) == 1, (args, code, err)
