"""Times printed for people in reason and warning lines (issue 24, "Honest outputs"): units
(`83.6 ms`), not raw integer ns; JSON keeps integer ns."""

from rtsched.cli.simulate import _interrupted


def test_an_interrupted_simulation_says_when_in_units(capsys):
    assert _interrupted({"interrupted": True, "horizon_ns": 83_600_000}) == 130
    err = capsys.readouterr().err
    assert "interrupted at 83.6 ms;" in err and "83600000" not in err
    assert _interrupted({"interrupted": False, "horizon_ns": 1}) == 0
