"""Issue 14, bad input: every public function refuses wrong values with the package's error
(never a TypeError, a truncation or a crash), CLI numbers and durations are range-checked with
one-line errors, file formats are strict, outputs are checked before long work starts."""

import json
import math

import pytest
import rtsched
from hypothesis import given, settings
from hypothesis import strategies as st
from rtsched import RtschedError, Task, TaskSet

TS = TaskSet([Task(wcet="1ms", period="10ms"), Task(wcet="2ms", period="20ms", name="b")], m=2)

# Values that are wrong for (almost) every parameter; each parameter below lists the ones that
# are valid for it.
WRONG = [None, -1, 0, 1.5, 2.0, math.nan, math.inf, "x", "", b"x", [], {}, True, 2**70, -(2**70), object(), "\ud800"]


def same(a, b):
    return type(a) is type(b) and (a is b or (a == b if not isinstance(a, float) else (a == b or a != a and b != b)))


def valid_for(param_valid, value):
    return any(same(value, ok) for ok in param_valid)


def tmp_out(tmp_path):
    return str(tmp_path / "out.jsonl")


# function -> (call with keyword arguments, {param: (a valid value, [other values that are valid])})
def api(tmp_path):
    table = {"set": [0, 0, 1], "wcet": [1, 2, 3], "period": [10, 10, 10]}
    fj = json.dumps({"m": 2, "tasks": [{"period": "10ms", "regions": [["1ms"], ["1ms", "1ms"]]}]})
    good_csv = tmp_path / "ok.csv"
    good_csv.write_text("wcet,period\n1,2\n")
    dag = json.dumps({"m": 2, "tasks": [{"period": 100, "nodes": [10, 20], "edges": [[0, 1]]}]})
    good_dag = tmp_path / "dag.json"
    good_dag.write_text(dag)
    return {
        "read_dag": (rtsched.read_dag, {"path": (str(good_dag), [])}),
        "analyze_dag": (
            rtsched.analyze_dag,
            {"dag": (dag, []), "m": (2, [None]), "tests": (["dag_federated"], [None]), "max_steps": (1000, [])},
        ),
        "generate_dag": (
            rtsched.generate_dag,
            {
                "shape": ("layered", []),
                "n": (2, []),
                "total": (1.0, [2.0, 1.5]),
                "umax": (1.0, [2.0, 1.5]),
                "wcet": ((1, 10), []),
                "beta": (None, [None]),
                "seed": (0, [0, 1]),
                "count": (1, [1, 2]),
                "m": (None, [None]),
                "p": (0.5, [0]),
                "layers": ((1, 2), []),
                "width": ((1, 2), []),
            },
        ),
        "dag_to_dot": (rtsched.dag_to_dot, {"dag": (dag, []), "task": (None, [None, 0])}),
        "dag_tests_available": (rtsched.dag_tests_available, {"several": (False, [True])}),
        "analyze": (
            rtsched.analyze,
            {
                "ts": (TS, []),
                "m": (2, [None]),
                "tests": (["gfb"], [None]),
                "max_steps": (1000, []),
                "exact_utilization": (False, [True]),
            },
        ),
        "analyze_many": (
            rtsched.analyze_many,
            {
                "sets": ([TS], [[]]),
                "m": (2, [None]),
                "tests": (["gfb"], [None]),
                "max_steps": (1000, []),
                "exact_utilization": (False, [True]),
                "progress": (False, [True]),
            },
        ),
        "analyze_table": (
            rtsched.analyze_table,
            {
                "table": (table, []),
                "m": (2, []),
                "tests": (["gfb"], [None]),
                "max_steps": (1000, []),
                "progress": (False, [True]),
            },
        ),
        "generate": (
            rtsched.generate,
            {
                "n": (4, []),
                "util": (1.0, [2.0, 1.5]),
                "generator": ("randfixedsum", []),
                "periods": ("loguniform:10ms-100ms", []),
                "umax": (1.0, []),
                "deadlines": ("implicit", []),
                "seed": (0, [1, 0, 2**64 - 1]),
                "count": (2, [None]),
                "m": (2, [None]),
            },
        ),
        "partition": (
            rtsched.partition,
            {
                "ts": (TS, []),
                "m": (2, [None]),
                "heuristic": ("pedf_ffd", []),
                "admission": (None, [None]),
                "epsilon": (0, [0]),
                "meta": (True, [True]),
            },
        ),
        "simulate": (
            rtsched.simulate,
            {
                "ts": (TS, []),
                "m": (2, [None]),
                "scheduler": ("gedf", []),
                "horizon": ("20ms", [None]),
                "staggered": (False, [True]),
                "sporadic": (None, [None, 0]),
                "exec_fraction": (None, [None]),
                "seed": (0, [0]),
                "trace": (None, [None, "x"]),
                "job_csv": (None, [None, "x"]),
                "overhead_stat": (None, [None]),
                "cash": (False, [True]),
                "soft": (False, [True]),
                "log": (None, [None]),
            },
        ),
        "simulate_forkjoin": (
            rtsched.simulate_forkjoin,
            {
                "text": (fj, []),
                "m": (2, [None]),
                "horizon": ("20ms", [None]),
                "scheduler": ("rtws", []),
                "sporadic": (None, [None, 0]),
                "seed": (0, [0]),
                "trace": (None, [None, "x"]),
            },
        ),
        "simulate_dag": (
            rtsched.simulate_dag,
            {
                "text": (dag, []),
                "m": (2, [None]),
                "scheduler": ("gedf", []),
                "horizon": (1000, [None]),
                "priorities": (None, [None]),
                "sporadic": (None, [None, 0]),
                "exec_fraction": (None, [None]),
                "seed": (0, [0]),
                "trace": (None, [None, "x"]),
                "log": (None, [None]),
            },
        ),
        "load": (rtsched.load, {"path": (str(good_csv), [])}),
        "load_many": (rtsched.load_many, {"path": (str(good_csv), [])}),
        "loads": (rtsched.loads, {"text": ("wcet,period\n1,2\n", []), "fmt": ("csv", [])}),
        "loads_many": (rtsched.loads_many, {"text": ("wcet,period\n1,2\n", []), "fmt": ("csv", [])}),
        "format_time": (rtsched.format_time, {"ns": (5, [0])}),
        "simulate_trace": (
            rtsched.simulate_trace,
            {
                "ts": (TS, []),
                "m": (2, [None]),
                "scheduler": ("gedf", []),
                "horizon": ("20ms", [None]),
                "staggered": (False, [True]),
                "sporadic": (None, [None, 0]),
                "seed": (0, [0]),
                "cash": (False, [True]),
                "soft": (False, [True]),
            },
        ),
        "save": (rtsched.save, {"path": (tmp_out(tmp_path), []), "tasksets": ([TS], [[]])}),
        "parse_duration": (rtsched.parse_duration, {"text": ("2ms", ["0"])}),
        "format_duration": (rtsched.format_duration, {"ns": (5, [0])}),
        "Task": (Task, {"wcet": (1, []), "period": (2, []), "deadline": (2, [None]), "name": ("a", [None, "x", ""])}),
        "TaskSet": (TaskSet, {"tasks": ([Task(wcet=1, period=2)], [[], None]), "m": (2, [None])}),
        "TaskSet.from_json": (TaskSet.from_json, {"text": ('{"tasks": []}', [])}),
        "TaskSet.from_csv": (TaskSet.from_csv, {"text": ("1,2\n", [])}),
        "TaskSet.hyperperiod": (TS.hyperperiod, {"bound": (10**9, [None])}),
    }


def test_every_public_function_is_listed():
    listed = {
        "analyze",
        "analyze_many",
        "analyze_table",
        "generate",
        "partition",
        "simulate",
        "simulate_forkjoin",
        "simulate_dag",
        "load",
        "load_many",
        "loads",
        "loads_many",
        "format_time",
        "simulate_trace",
        "save",
        "parse_duration",
        "format_duration",
        "Task",
        "TaskSet",
        "read_dag",
        "analyze_dag",
        "generate_dag",
        "dag_to_dot",
        "dag_tests_available",
    }
    # run is covered by test_run_api_rejects_wrong_values and run_forkjoin by
    # test_run_forkjoin_api_rejects_wrong_values (a valid call starts real threads);
    # gantt draws a trace (tests/test_api_habits.py); tests_available and schedulers take no
    # arguments; the error classes and __version__ are not functions.
    no_args = {"tests_available", "schedulers", "__version__"}
    errors = {n for n in rtsched.__all__ if n.endswith(("Error", "Missing"))}
    assert set(rtsched.__all__) - {"run", "run_forkjoin", "gantt"} - no_args - errors == listed


def call_with(fn, params, name, value):
    kwargs = {k: v for k, (v, _) in params.items()}
    kwargs[name] = value
    return fn(**kwargs)


def test_valid_calls_work(tmp_path):
    """The base calls are valid, so that each wrong value below is what fails."""
    for _label, (fn, params) in api(tmp_path).items():
        first = next(iter(params))
        call_with(fn, params, first, params[first][0])


def test_wrong_values_raise_the_package_error(tmp_path):
    checked = 0
    for label, (fn, params) in api(tmp_path).items():
        for name, (_, ok) in params.items():
            for value in WRONG:
                if valid_for(ok, value):
                    continue
                try:
                    call_with(fn, params, name, value)
                except RtschedError as e:
                    assert isinstance(e, ValueError)
                    checked += 1
                    continue
                except Exception as e:  # noqa: BLE001 - the point is the exception's type
                    pytest.fail(f"{label}({name}={value!r}) raised {type(e).__name__}: {e}")
                pytest.fail(f"{label}({name}={value!r}) was accepted")
    assert checked > 500


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["analyze", "generate", "partition", "simulate", "Task", "TaskSet", "format_duration"]),
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not float(x).is_integer()),
        st.integers(max_value=-1),
        st.integers(min_value=2**64),
        st.text(alphabet="xyz!@ ", min_size=1),
        st.lists(st.integers(), min_size=1),
    ),
)
def test_generated_wrong_values_raise_the_package_error(tmp_path_factory, fname, value):
    fn, params = api(tmp_path_factory.mktemp("p"))[fname]
    for name, (_, ok) in params.items():
        if valid_for(ok, value) or (name in ("name", "trace", "job_csv") and isinstance(value, str)):
            continue  # any string is a name, most strings are file names
        if name in ("util", "umax", "exec_fraction") and isinstance(value, float):
            continue  # real-valued: many floats are valid
        with pytest.raises(RtschedError):
            call_with(fn, params, name, value)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: rtsched.analyze(None), ["argument 'ts'", "None"]),
        (lambda: rtsched.analyze(rtsched.load.__doc__), ["argument 'ts'"]),
        (lambda: rtsched.analyze_many([TS, None]), ["argument 'sets'", "item 1"]),
        (lambda: rtsched.analyze_many(TS), ["one TaskSet"]),
        (lambda: rtsched.analyze(TS, m=1.9), ["argument 'm'", "1.9"]),
        (lambda: rtsched.analyze(TS, m=2**32), ["argument 'm'", "1..=16384"]),
        (lambda: rtsched.analyze(TS, m=True), ["argument 'm'"]),
        (lambda: rtsched.generate(4, 1.0, count=2.5), ["argument 'count'"]),
        (lambda: rtsched.generate(4.0, 1.0), ["argument 'n'"]),
        (lambda: rtsched.simulate(TS, horizon=1.5), ["argument 'horizon'", "duration"]),
        (lambda: rtsched.simulate(TS, seed=-1), ["argument 'seed'"]),
        (lambda: Task(wcet=True, period=2), ["wcet"]),
        (lambda: Task(wcet=1, period=2, name=5), ["argument 'name'"]),
        (lambda: TaskSet("ab"), ["argument 'tasks'"]),
        # None is a failed load far more often than a wish for an empty set: TaskSet() is that.
        (lambda: TaskSet(None), ["tasks", "None", "TaskSet()"]),
        (lambda: TaskSet([Task(wcet=1, period=2)], m=10**9), ["field 'm'", "1..=16384"]),
        (lambda: rtsched.format_duration(-5), ["argument 'ns'"]),
        (lambda: Task(wcet=1, period=2, name="a\0b"), ["field 'name'", "NUL"]),
    ],
)
def test_api_errors_name_the_argument(call, words):
    with pytest.raises(RtschedError) as e:
        call()
    for w in words:
        assert w in str(e.value), str(e.value)


@pytest.mark.parametrize(
    "args, words",
    [
        (["generate", "--n", 4, "--util", 1, "--m", -3], ["--m", "1..=16384", "-3"]),
        (["generate", "--n", 4, "--util", 1, "--m", 2**32], ["--m", "4294967296"]),
        (["generate", "--n", 4, "--util", 1, "--m", "2.5"], ["--m", "integer"]),
        (["generate", "--n", 4, "--util", 1, "--seed", -1], ["--seed", "-1"]),
        (["generate", "--n", 4, "--util", 1, "--seed", 2**64], ["--seed"]),
        (["generate", "--n", 4, "--util", 1, "--count", 0], ["--count"]),
        (["generate", "--n", 10**9, "--util", 1], ["--n", "1000000"]),
        (["generate", "--n", 4, "--util", "nan"], ["--util"]),
        (
            ["generate", "--n", 4, "--util", 1, "--periods", "loguniform:10-100ms"],
            ["did you mean loguniform:10ms-100ms"],
        ),
        (["generate", "--n", 4, "--util", 1, "--periods", "uniform:10-100"], ["did you mean uniform:10ms-100ms"]),
        (["analyze", "X", "--m", 0], ["--m"]),
        (["analyze", "X", "--max-steps", 0], ["--max-steps"]),
        (["partition", "X", "--epsilon", 500], ["--epsilon", "did you mean 500us"]),
        (["simulate", "X", "--horizon", 10], ["--horizon", "did you mean 10s"]),
        (["simulate", "X", "--quantum", "1.5"], ["--quantum", "did you mean 1.5ms"]),
        (["simulate", "X", "--sporadic", "3"], ["--sporadic", "did you mean 3ms"]),
        (["quickstart", "--sets", -1], ["--sets"]),
        (["run", "X", "--scheduler", "gsn-edf", "--rt-priority", 99999999999], ["--rt-priority", "1..=99"]),
        (["run", "X", "--scheduler", "gsn-edf", "--rt-priority", 0], ["--rt-priority"]),
        (["run", "X", "--scheduler", "gsn-edf", "--cpus", "0-4294967295"], ["--cpus", "largest CPU id"]),
        (["run", "X", "--scheduler", "gsn-edf", "--cpus", "3-1"], ["--cpus", "empty"]),
        (["run", "X", "--scheduler", "gsn-edf", "--duration", 2], ["--duration", "did you mean 2s"]),
        (["run", "X", "--scheduler", "gsn-edf", "--seed", -1], ["--seed"]),
        (["run", "X", "--scheduler", "gsn-edf", "--dedicated-cpu", -1], ["--dedicated-cpu"]),
        (["measure-overheads", "--scheduler", "gsn-edf", "--cpus", "0-4294967295"], ["--cpus"]),
        (["measure-overheads", "--scheduler", "gsn-edf", "--rt-priority", 100], ["--rt-priority"]),
        (
            ["analyze", "X", "--overheads", "o.json", "--mechanism", "gsn-edf", "--cpd", 5],
            ["--cpd", "did you mean 5us"],
        ),
        (["analyze", "X", "--overheads", "o.json", "--mechanism", "gsn-edf", "--quantum", 1], ["--quantum", "1ms"]),
        (["sweep", "X", "--jobs", 0], ["--jobs"]),
    ],
)
def test_cli_numbers_are_range_checked(cli, args, words):
    code, out, err = cli(*args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err and "usage:" not in err, err
    for w in words:
        assert w in err, err


def test_cli_accepts_zero_without_unit_and_units(cli, tmp_path):
    f = tmp_path / "t.json"
    rtsched.save(f, TS)
    code, _, err = cli("partition", f, "--epsilon", "0", "--heuristic", "spres", "--json")
    assert code == 0, err
    code, _, err = cli("simulate", f, "--horizon", "20ms", "--json")
    assert code == 0, err


def test_file_formats_are_strict(cli, tmp_path):
    cases = [
        ("dup.json", '{"m": 2, "tasks": [{"wcet": 1, "period": 5, "period": 6}]}', ["duplicate key", "'period'"]),
        ("dupm.json", '{"m": 2, "m": 3, "tasks": []}', ["duplicate key", "'m'"]),
        ("empty.csv", "", ["no task rows"]),
        ("header.csv", "wcet,period,deadline\n", ["no task rows"]),
        ("quote.csv", 'wcet,period,name\n1,2,"open\n', ["never closed"]),
        ("bigm.json", '{"m": 1000000000, "tasks": []}', ["1..=16384"]),
    ]
    for name, text, words in cases:
        f = tmp_path / name
        f.write_text(text)
        code, _, err = cli("analyze", f, "--m", 2)
        assert code == 2 and err.count("\n") == 1, (name, err)
        for w in words:
            assert w in err, (name, err)
    bom = tmp_path / "bom.csv"
    bom.write_bytes("\ufeffwcet,period\n1ms,10ms\n".encode())
    assert rtsched.load(bom)[0].wcet == 1_000_000
    bom = tmp_path / "bom.json"
    bom.write_bytes(("\ufeff" + TS.to_json()).encode())
    assert rtsched.load(bom) == TS


names = st.one_of(
    st.none(), st.text(max_size=8), st.sampled_from(["", " ", "a,b", 'q"q', "x\ny", "x\r\ny", "#c", " s "])
)
tasks = st.builds(
    lambda c, d, t, n: Task(wcet=c, period=t, deadline=d, name=n),
    st.integers(1, 2**53),
    st.integers(1, 2**53),
    st.integers(1, 2**53),
    names.filter(lambda s: s is None or "\0" not in s),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(tasks, min_size=1, max_size=6), st.one_of(st.none(), st.integers(1, 16384)))
def test_load_save_round_trip(tmp_path_factory, task_list, m):
    d = tmp_path_factory.mktemp("rt")
    ts = TaskSet(task_list, m=m)
    rtsched.save(d / "x.csv", TaskSet(task_list))
    assert rtsched.load(d / "x.csv") == TaskSet(task_list)  # CSV has no place for m
    rtsched.save(d / "x.json", ts)
    assert rtsched.load(d / "x.json") == ts
    rtsched.save(d / "x.jsonl", [ts, ts])
    assert rtsched.load_many(d / "x.jsonl") == [ts, ts]


def test_outputs_are_checked_before_the_simulation(cli, tmp_path):
    f = tmp_path / "t.json"
    rtsched.save(f, TS)
    for opt in ["--trace", "--perfetto", "--job-csv", "--sched-trace", "--gantt"]:
        target = tmp_path / "no" / "such" / ("x.svg" if opt == "--gantt" else "x.out")
        code, out, err = cli("simulate", f, "--horizon", "1000s", opt, target)
        assert code == 2 and out == "", (opt, err)
        assert "does not exist" in err, err
    with pytest.raises(RtschedError, match="is a directory"):
        rtsched.simulate(TS, horizon="10ms", trace=tmp_path)


def test_run_outputs_and_placement_are_checked_before_the_run(cli, tmp_path):
    """`run` refuses a bad output path or placement before any thread starts (exit 2, one line)."""
    f = tmp_path / "t.json"
    rtsched.save(f, TS)
    for opt in ["-o", "--trace", "--perfetto", "--job-csv", "--gantt"]:
        target = tmp_path / "no" / "such" / ("x.svg" if opt == "--gantt" else "x.out")
        code, out, err = cli("run", f, "--scheduler", "gsn-edf", "--duration", "1000s", opt, target)
        assert code == 2 and out == "", (opt, err)
        assert "does not exist" in err and err.count("\n") == 1, err
    # The strict placement parser of simulate: duplicate keys, a placement for another m.
    code, out, err = cli("partition", f, "--m", 1, "--heuristic", "ffd", "--json")
    assert code == 0, err
    placement = json.loads(out)
    good = tmp_path / "p.json"
    good.write_text(out)
    dup = tmp_path / "dup.json"
    dup.write_text('{"m": 1, ' + json.dumps(placement)[1:])
    code, out, err = cli("run", f, "--scheduler", "pedf", "--placement", dup, "--duration", "1000s")
    assert code == 2 and "duplicate key" in err and err.count("\n") == 1, err
    code, out, err = cli("run", f, "--scheduler", "pedf", "--placement", good, "--cpus", "0,1", "--duration", "1000s")
    assert code == 2 and "the placement is for m = 1" in err and "--cpus" in err, err
    from rtsched.runtime import _prepare

    def _placement_partition(placement, ts, m):  # the partition a pedf run on m CPUs decides
        plan, _ = _prepare(ts, "pedf", list(range(m)), "1s", None, "sleep", True, 0, (), None, placement)
        return plan.partition

    assert _placement_partition(placement, TS, 1) == [[0, 1]]
    with pytest.raises(RtschedError, match="each of the 2 tasks once"):
        _placement_partition([[0, 0]], TS, 1)
    with pytest.raises(RtschedError, match="argument 'placement'"):
        _placement_partition([[0, 5]], TS, 1)


def test_run_api_rejects_wrong_values():
    from rtsched.runtime import run

    for kw, words in [
        ({"duration": 1.5}, "argument 'duration'"),
        ({"rt_priority": 100}, "argument 'rt_priority'"),
        ({"cpus": "0-4294967295"}, "largest CPU id"),
        ({"cpus": [0, 0]}, "distinct"),
        ({"seed": -1}, "argument 'seed'"),
        ({"idle": "busy"}, "argument 'idle'"),
    ]:
        with pytest.raises(RtschedError, match=words):
            run(TS, "gsn-edf", **kw)


def test_run_forkjoin_api_rejects_wrong_values():
    fj = json.dumps({"m": 1, "tasks": [{"period": "10ms", "regions": [["1ms"]]}]})
    for kw, words in [
        ({"duration": 1.5}, "argument 'duration'"),
        ({"rt_priority": 100}, "argument 'rt_priority'"),
        ({"seed": -1}, "argument 'seed'"),
        ({"idle": "busy"}, "argument 'idle'"),
    ]:
        with pytest.raises(RtschedError, match=words):
            rtsched.run_forkjoin(fj, **kw)
