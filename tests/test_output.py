"""The one output writer (rtsched.output): whole files or none, in the folder given, errors that
name the path; and the commands write through it."""

import pytest
import rtsched
from rtsched import output


def test_writes_whole_files_and_leaves_no_temporary(tmp_path):
    p = output.write_text(tmp_path / "a.txt", "héllo\n")
    assert p == tmp_path / "a.txt" and p.read_bytes() == "héllo\n".encode()
    output.write_data(tmp_path / "b.bin", b"\x00\x01")
    output.write_data(tmp_path / "c.txt", "text")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01" and (tmp_path / "c.txt").read_text() == "text"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["a.txt", "b.bin", "c.txt"]


def test_a_failed_write_keeps_the_previous_file(tmp_path):
    target = tmp_path / "r.json"
    output.write_text(target, "old")

    def half(f):
        f.write(b"new, but")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        output.write_with(target, half)
    assert target.read_text() == "old"
    assert [f.name for f in tmp_path.iterdir()] == ["r.json"]


def test_errors_name_the_path(tmp_path):
    with pytest.raises(rtsched.RtschedError, match="cannot write .*nowhere.*x.txt"):
        output.write_text(tmp_path / "nowhere" / "x.txt", "x")
    assert not (tmp_path / "nowhere").exists()


def test_figures_take_the_format_of_their_suffix(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    output.save_figure(fig, tmp_path / "f.png")
    output.save_figure(fig, tmp_path / "f.svg")
    plt.close(fig)
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (tmp_path / "f.svg").read_bytes()[:500]
    assert sorted(f.name for f in tmp_path.iterdir()) == ["f.png", "f.svg"]


def test_simulate_reports_an_unwritable_output_in_one_line(cli, tmp_path):
    f = tmp_path / "ts.json"
    f.write_text(rtsched.TaskSet([rtsched.Task(wcet=1, period=4)]).to_json())
    code, out, err = cli("simulate", f, "--m", 1, "--trace", tmp_path / "missing" / "t.jsonl")
    assert code == 2 and err.startswith("rtsched simulate: error: cannot write") and "t.jsonl" in err
    assert len(err.strip().splitlines()) == 1
