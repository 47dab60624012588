"""Invalid input and internal errors are distinct: RtschedError (a ValueError) for the first,
InternalError (a RuntimeError, asking for a report) for the second; the CLI exits 2 and 70."""

import rtsched
from rtsched import cli


def test_error_classes():
    assert issubclass(rtsched.RtschedError, ValueError)
    assert issubclass(rtsched.InternalError, RuntimeError)
    assert not issubclass(rtsched.InternalError, ValueError)
    assert "InternalError" in rtsched.__all__ and "RtschedError" in rtsched.__all__


def test_simulator_input_errors_are_rtsched_errors():
    ts = rtsched.TaskSet([rtsched.Task(wcet=1, period=4)])
    try:
        rtsched.simulate(ts, 0)
    except rtsched.RtschedError as e:
        assert "field 'm'" in str(e) and "internal" not in str(e)
    else:  # pragma: no cover - the test fails here
        raise AssertionError("m = 0 was accepted")


def test_cli_reports_an_internal_error_in_one_line_with_status_70(tmp_path, capsys, monkeypatch):
    import importlib

    sim_module = importlib.import_module("rtsched.simulation")

    f = tmp_path / "ts.json"
    f.write_text(rtsched.TaskSet([rtsched.Task(wcet=1, period=4)]).to_json())

    def broken(*args, **kwargs):
        raise rtsched.InternalError("internal error: invariant violated at 3 ns (a bug ...; please report it)")

    monkeypatch.setattr(sim_module, "simulate", broken)
    assert cli.main(["simulate", str(f), "--m", "1"]) == cli.EXIT_INTERNAL == 70
    err = capsys.readouterr().err
    assert err == "rtsched simulate: internal error: invariant violated at 3 ns (a bug ...; please report it)\n"
    monkeypatch.undo()
    assert cli.main(["simulate", str(f), "--m", "0"]) == 2
    assert "rtsched simulate: error:" in capsys.readouterr().err
