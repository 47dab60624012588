"""Issue 14, speed without loss: the batch paths (analyze_many, analyze_table, the JSON Lines CLI)
give the same reports as one-set analysis, the exact utilization only on request, progress and
Ctrl-C (stopping within a fraction of a second and keeping what is done)."""

import json
import os
import signal
import subprocess
import sys
import threading
from fractions import Fraction

import numpy as np
import pytest
import rtsched
from rtsched import RtschedError


def exact_u(ts):
    return sum(Fraction(t.wcet, t.period) for t in ts)


def test_utilization_is_a_float_and_exact_only_on_request():
    ts = rtsched.generate(40, 4.8, periods="uniform:10ms-100ms", seed=3, m=8)
    r = rtsched.analyze(ts, tests=["gfb"])
    assert isinstance(r["utilization"], float) and abs(r["utilization"] - float(exact_u(ts))) < 1e-12
    assert "utilization_exact" not in r
    r = rtsched.analyze(ts, tests=["gfb"], exact_utilization=True)
    num, den = r["utilization_exact"].split("/")
    assert Fraction(int(num), int(den)) == exact_u(ts)
    assert len(den) > 50, "co-prime periods: a long exact fraction, which is why it is optional"


def test_batch_equals_one_by_one_and_the_cli_lines(cli, tmp_path):
    # m = 1 so that every test applies, including fp_dm_uni (response times) and gedf_srt (bounds).
    sets = [rtsched.generate(5, u, seed=s, m=1) for s, u in enumerate([0.3, 0.6, 0.8, 0.95, 0.99] * 8)]
    many = rtsched.analyze_many(sets, exact_utilization=True)
    assert many == [rtsched.analyze(ts, exact_utilization=True) for ts in sets]
    assert {"fp_dm_uni", "gedf_srt", "edf_uni", "spres"} <= set(many[0]["results"])
    assert any(r["results"]["fp_dm_uni"]["response_times_ns"] for r in many)
    assert any(r["results"]["gedf_srt"]["tardiness_ns"] for r in many)
    f = tmp_path / "s.jsonl"
    rtsched.save(f, sets)
    code, out, err = cli("analyze", f, "--json", "--exact-utilization")
    assert code == 0, err
    assert [json.loads(line) for line in out.splitlines()] == many
    # Both sides verdicts agree with the uniprocessor tests run on their own.
    for r, ts in zip(many, sets, strict=True):
        assert r["results"]["edf_uni"]["schedulable"] == (exact_u(ts) <= 1)


def test_jsonl_errors_stay_on_their_line(cli, tmp_path):
    good = rtsched.generate(6, 2.0, seed=1, m=4)
    f = tmp_path / "b.jsonl"
    f.write_text(
        "\ufeff"
        + good.to_json()
        + "\n"
        + '{"m": 1000000000, "tasks": [{"wcet": 1, "period": 2}]}\n'
        + "# a comment\n\n"
        + '{"m": 2, "tasks": [{"wcet": 1, "period": 2, "wcet": 1}]}\n'
        + good.to_json()
        + "\n"
    )
    code, out, err = cli("analyze", f, "--json", "--test", "gfb")
    assert code == 1 and "2 invalid" in err
    lines = [json.loads(x) for x in out.splitlines()]
    assert [x.get("line") for x in lines] == [None, 2, 5, None]
    assert "1..=16384" in lines[1]["error"] and lines[1]["error"].startswith("line 2: field 'm'")
    assert "duplicate key" in lines[2]["error"] and "'wcet'" in lines[2]["error"]
    assert lines[0] == lines[3] == rtsched.analyze(good, tests=["gfb"])
    # The table form reports the same, errors on stderr.
    code, out, err = cli("analyze", f, "--test", "gfb")
    assert code == 1 and "field 'm'" in err and "invalid: line 2" in out


def test_binary_and_non_utf8_files_are_one_line_errors(cli, tmp_path):
    for name, data, words in [
        ("bin.jsonl", b"\x7fELF\x02\x01\x00\x00", ["not a text file", "NUL"]),
        ("latin1.jsonl", b'{"tasks": []}\n' + "é".encode("latin-1") + b"\n", ["not UTF-8"]),
        ("bin.json", b"\x00\x01\x02", ["not a text file"]),
        ("latin1.csv", "wcet,period,name\n1,2,é\n".encode("latin-1"), ["not UTF-8"]),
    ]:
        f = tmp_path / name
        f.write_bytes(data)
        code, out, err = cli("analyze", f, "--m", 2)
        assert code == 2, (name, err)
        assert err.count("\n") == 1 and "Traceback" not in err, err
        for w in words:
            assert w in err, (name, err)
        with pytest.raises(RtschedError):
            rtsched.load_many(f)


def test_analyze_table_matches_analyze_many():
    pa = pytest.importorskip("pyarrow")
    sets = [rtsched.generate(12, u, seed=s, m=4, deadlines="constrained") for s, u in enumerate([1.5, 2.5, 3.2] * 10)]
    tests = ["gfb", "bak", "bcl", "bcl_iterative", "rta", "bar", "gedf", "pedf_ffd"]
    want = rtsched.analyze_many(sets, tests=tests)
    rows = [(i * 7 + 1, t.wcet, t.period, t.deadline) for i, ts in enumerate(sets) for t in ts]
    cols = {
        k: np.array([r[j] for r in rows], dtype=np.int64) for j, k in enumerate(["set", "wcet", "period", "deadline"])
    }
    got = rtsched.analyze_table(cols, m=4, tests=tests)
    assert list(got["set"]) == [i * 7 + 1 for i in range(len(sets))]
    assert list(got["n"]) == [12] * len(sets)
    for i, r in enumerate(want):
        assert got["utilization"][i] == r["utilization"]
        for t in tests:
            assert bool(got[t][i]) == (r["results"][t]["schedulable"] is True), (i, t)
            assert bool(got[t + "_gave_up"][i]) == r["results"][t]["gave_up"]
    assert sum(got["gedf"]) > 0 and sum(~got["gedf"]) > 0, "both verdicts occur"
    # An Arrow table in, an Arrow table out; m may be a column.
    table = pa.table(dict(cols, m=np.full(len(rows), 4)))
    out = rtsched.analyze_table(table, tests=["gedf"])
    assert isinstance(out, pa.Table) and out.column("gedf").to_pylist() == list(got["gedf"])


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda c: c.update(wcet=c["wcet"].astype(float)), ["integers", "float"]),
        (lambda c: c.update(set=np.array([0, 1, 0])), ["contiguous"]),
        (lambda c: c.update(period=np.array([10, 0, 10])), ["row 1", "period"]),
        (lambda c: c.update(period=np.array([10, -5, 10])), ["row 1", "period"]),
        (lambda c: c.pop("wcet"), ["no column 'wcet'"]),
        (lambda c: c.update(extra=np.zeros(3)), ["unknown column"]),
        (lambda c: c.update(wcet=np.array([1, 2])), ["1-D column of 3 rows"]),
    ],
)
def test_analyze_table_rejects_bad_columns(change, words):
    cols = {"set": np.array([0, 1, 2]), "wcet": np.array([1, 1, 1]), "period": np.array([10, 10, 10])}
    change(cols)
    with pytest.raises(RtschedError) as e:
        rtsched.analyze_table(cols, m=2)
    for w in words:
        assert w in str(e.value), str(e.value)
    with pytest.raises(RtschedError, match="no processor count"):
        rtsched.analyze_table({"set": [0], "wcet": [1], "period": [2]})


def test_progress_callback_sees_the_whole_batch():
    sets = rtsched.generate(10, 2.0, seed=1, count=200, m=4)
    seen = []
    out, interrupted = rtsched._core.analyze_sets(sets, None, ["gfb"], 1000, False, lambda d, t: seen.append((d, t)))
    assert not interrupted and len(out) == 200
    assert seen and seen[-1] == (200, 200) and all(t == 200 for _, t in seen)
    from rtsched.experiments.progress import Progress

    class Sink:
        def __init__(self):
            self.text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    sink = Sink()
    p = Progress(1000, 1000, stream=sink, label="analyze", unit="task sets", delay=0.0, interval=0.0)
    p.update(0, 250)
    p.close()
    assert "250/1,000 task sets (25%)" in sink.text and "task sets/s" in sink.text and "ETA" in sink.text
    quiet = Sink()
    p = Progress(10, 10, stream=quiet, label="analyze", unit="task sets", delay=60.0)
    p.update(0, 10)
    p.close()
    assert quiet.text == "", "short runs stay silent"


def slow_sets(count):
    # RTA on 150-task sets near U = m/2: a few ms each.
    return rtsched.generate(150, 4.0, periods="uniform:10ms-100ms", seed=9, count=count, m=8)


def test_ctrl_c_stops_analyze_many_and_keeps_what_is_done():
    sets = slow_sets(3000)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as e:
            rtsched.analyze_many(sets, tests=["rta"])
    finally:
        timer.cancel()
    partial = e.value.partial
    assert 0 < len(partial) < len(sets), len(partial)
    assert partial == rtsched.analyze_many(sets[: len(partial)], tests=["rta"])


def test_ctrl_c_stops_the_cli_batch_and_keeps_the_lines_written(tmp_path):
    f = tmp_path / "slow.jsonl"
    rtsched.save(f, slow_sets(3000))
    p = subprocess.Popen(
        [sys.executable, "-m", "rtsched", "analyze", str(f), "--json", "--test", "rta"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,  # unbuffered: readline below must not read past the first line
    )
    # Interrupt once the batch has written its first line (a fixed sleep raced the interpreter's
    # start-up on a loaded machine: the interrupt then came before the batch began).
    assert p.stdout is not None
    first = p.stdout.readline()
    p.send_signal(signal.SIGINT)
    out_b, err_b = p.communicate(timeout=120)
    out, err = out_b.decode(), err_b.decode()
    assert p.returncode == 130, err
    assert "interrupted after" in err and "Traceback" not in err
    lines = (first.decode() + out).splitlines()
    assert 0 < len(lines) < 3000
    for line in lines:
        assert set(json.loads(line)) == {"m", "n", "utilization", "results"}


def test_generate_count_streams_the_same_sets(cli, tmp_path):
    f = tmp_path / "g.jsonl"
    code, out, err = cli("generate", "--n", 7, "--util", 2.0, "--count", 2500, "--seed", 11, "--m", 4, "-o", f)
    assert code == 0 and out == "", err
    got = rtsched.load_many(f)
    assert got == rtsched.generate(7, 2.0, seed=11, count=2500, m=4)
    code, out, _ = cli("generate", "--n", 7, "--util", 2.0, "--count", 3, "--seed", 11, "--m", 4)
    assert [rtsched.TaskSet.from_json(x) for x in out.splitlines()] == got[:3]
    code, _, err = cli("generate", "--n", 7, "--util", 2.0, "--count", 3, "-o", tmp_path / "x.csv")
    assert code == 2 and ".jsonl" in err
    code, _, err = cli("generate", "--n", 7, "--util", 2.0, "--count", 3, "-o", tmp_path / "nodir" / "x.jsonl")
    assert code == 2 and "does not exist" in err


def interrupt_after(seconds):
    t = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    t.start()
    return t


def test_ctrl_c_stops_a_simulation_and_keeps_the_part_simulated(tmp_path):
    ts = rtsched.generate(200, 5.0, periods="uniform:10ms-100ms", seed=2, m=8)
    out = tmp_path / "jobs.csv"
    timer = interrupt_after(0.4)
    try:
        with pytest.raises(KeyboardInterrupt) as e:
            rtsched.simulate(ts, horizon="1000s", job_csv=out)
    finally:
        timer.cancel()
    s = e.value.partial
    assert s["interrupted"] and 0 < s["horizon_ns"] < 1000 * 10**9
    assert "interrupted" in s["horizon_message"]
    rows = out.read_text().splitlines()
    assert len(rows) - 1 == s["jobs"] > 0, "the job CSV holds the jobs of the part simulated"


def test_ctrl_c_stops_partitioning():
    ts = rtsched.generate(20_000, 4.8, generator="uunifast-discard", periods="uniform:10ms-100ms", seed=1, m=8)
    timer = interrupt_after(0.5)
    try:
        with pytest.raises(KeyboardInterrupt, match="partitioning interrupted"):
            rtsched.partition(ts, heuristic="ffd", admission="fp-rm")
    finally:
        timer.cancel()


def test_cli_start_imports_no_pyarrow_or_numpy():
    """The commands start without the experiment engine's heavy imports (pyarrow, numpy): they
    are loaded when a sweep runs, not for `rtsched analyze` (startup was 0.2 s CPU with them)."""
    import subprocess
    import sys

    code = (
        "import sys; from rtsched.cli import build_parser; build_parser(); "
        "print(sorted(m for m in ('pyarrow', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
