"""The Python API as SchedCAT and SimSo users expect it: picklable, copyable, growable task sets,
columns in and out (lists, numpy, pandas), Python reprs, load/load_many, every error class
exported, no function shadowing its module, Gantt charts as matplotlib Figures."""

from __future__ import annotations

import copy
import json
import multiprocessing
import pickle
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
import rtsched
from rtsched import RtschedError, Task, TaskSet


def sample() -> TaskSet:
    return TaskSet(
        [Task(wcet="2ms", period="10ms", name="ctl"), Task(wcet=1_500_000, period="20ms", deadline="15ms")], m=2
    )


def test_pickle_and_copy_keep_everything():
    ts = sample()
    for proto in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(ts, proto)) == ts
        assert pickle.loads(pickle.dumps(ts[0], proto)) == ts[0]
    shallow, deep = copy.copy(ts), copy.deepcopy(ts)
    assert shallow == ts == deep and shallow is not ts and ts.copy() == ts
    shallow.append(Task(wcet=1, period=2))  # a copy is independent of the original
    assert len(shallow) == 3 and len(ts) == 2
    assert copy.copy(ts[0]) == ts[0] and copy.deepcopy(ts[0]) == ts[0]


def _utilization(ts: TaskSet) -> tuple[int, float]:
    return len(ts), ts.utilization


def test_task_sets_cross_process_boundaries():
    sets = rtsched.generate(8, 2.5, seed=3, count=6, m=4)
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=ctx) as pool:
        got = list(pool.map(_utilization, sets))
        verdicts = list(pool.map(rtsched.analyze, sets))
    assert got == [_utilization(ts) for ts in sets]
    assert verdicts == [rtsched.analyze(ts) for ts in sets]


def test_built_incrementally():
    ts = TaskSet()
    assert len(ts) == 0 and ts.m is None
    ts.append(Task(wcet="2ms", period="10ms", name="ctl"))
    ts.extend([Task(wcet=1_500_000, period="20ms", deadline="15ms")])
    ts.m = 2
    assert ts == sample()
    assert ts[1:] == TaskSet([ts[1]], m=2) and ts[::-1][0] == ts[1] and list(ts) == ts.tasks
    with pytest.raises(RtschedError, match="task 3: expected a Task"):
        ts.extend([Task(wcet=1, period=2), "nope"])
    assert len(ts) == 2  # a failed extend adds nothing
    with pytest.raises(RtschedError, match="field 'm'"):
        ts.m = 0
    with pytest.raises(RtschedError, match="field 'm'"):
        TaskSet(m=1.5)
    with pytest.raises(IndexError, match="task index 5 out of range for 2 tasks"):
        ts[5]


def test_from_lists_and_numpy():
    a = TaskSet.from_lists(["2ms", 1_500_000], [10_000_000, "20ms"], deadline=[None, "15ms"], name=["ctl", None], m=2)
    assert a == sample()
    b = TaskSet.from_lists(
        np.array([2_000_000, 1_500_000]),
        np.array([10_000_000, 20_000_000], dtype=np.uint64),
        deadline=np.array([10_000_000, 15_000_000]),
        name=["ctl", None],
        m=2,
    )
    assert b == a
    with pytest.raises(RtschedError, match="task 1: field 'wcet'"):
        TaskSet.from_lists([1, np.float64(2.5)], [10, 10])  # a float is refused, never truncated
    with pytest.raises(RtschedError, match="field 'deadline': 1 values for 2 tasks"):
        TaskSet.from_lists([1, 2], [10, 10], deadline=[5])
    with pytest.raises(RtschedError, match="task 0: field 'period': must be at least 1 ns"):
        TaskSet.from_lists([1], [0])


def test_pandas_round_trip():
    pd = pytest.importorskip("pandas", reason="pandas is optional (pip install pandas)")
    ts = sample()
    df = ts.to_pandas()
    assert list(df.columns) == ["name", "wcet", "period", "deadline"] and df.attrs["m"] == 2
    assert df["wcet"].tolist() == [2_000_000, 1_500_000]
    assert TaskSet.from_pandas(df) == ts
    df2 = pd.DataFrame({"wcet": ["1ms", 2_000_000], "period": ["10ms", "20ms"]})
    assert TaskSet.from_pandas(df2, m=3) == TaskSet(
        [Task(wcet="1ms", period="10ms"), Task(wcet="2ms", period="20ms")], m=3
    )
    with pytest.raises(RtschedError, match="field 'dedline': unknown column"):
        TaskSet.from_pandas(pd.DataFrame({"wcet": [1], "period": [2], "dedline": [2]}))
    with pytest.raises(RtschedError, match="field 'period': missing column"):
        TaskSet.from_pandas(pd.DataFrame({"wcet": [1]}))


def test_reprs_are_python():
    ts = sample()
    assert repr(ts[0]) == "Task(wcet='2ms', period='10ms', name='ctl')"
    assert repr(ts[1]) == "Task(wcet='1500us', period='20ms', deadline='15ms')"
    assert eval(repr(ts), {"Task": Task, "TaskSet": TaskSet}) == ts
    big = rtsched.generate(10, 2.5, seed=1)
    assert repr(big) == "TaskSet(n=10, m=None, utilization=2.5)"
    assert "Some(" not in repr(rtsched.generate(10, 2.5, seed=1, m=4))


def test_load_one_and_load_many(tmp_path):
    one, many = tmp_path / "one.json", tmp_path / "many.jsonl"
    rtsched.save(one, sample())
    rtsched.save(many, [sample(), sample()])
    assert rtsched.load(one) == sample() and rtsched.load_many(one) == [sample()]
    assert rtsched.load_many(many) == [sample(), sample()]
    with pytest.raises(RtschedError, match="holds 2 task sets; rtsched.load reads one, rtsched.load_many a batch"):
        rtsched.load(many)
    assert rtsched.loads(sample().to_json(), "json") == sample()
    assert rtsched.loads_many(sample().to_json() + "\n" + sample().to_json(), "jsonl") == [sample(), sample()]


def test_every_error_class_is_exported():
    from rtsched.experiments.errors import EvaluatorError, EvaluatorMissing, SpecError
    from rtsched.simulation import NotPlacedError

    assert (rtsched.SpecError, rtsched.EvaluatorError, rtsched.EvaluatorMissing) == (
        SpecError,
        EvaluatorError,
        EvaluatorMissing,
    )
    assert rtsched.NotPlacedError is NotPlacedError
    for cls in (rtsched.NotPlacedError, rtsched.SpecError, rtsched.EvaluatorError, rtsched.EvaluatorMissing):
        assert issubclass(cls, rtsched.RtschedError) and cls.__name__ in rtsched.__all__
    assert issubclass(rtsched.RtschedError, ValueError) and issubclass(rtsched.InternalError, RuntimeError)
    # Every exception class reachable from the package is exported.
    classes = {
        v for m in vars(rtsched).values() if hasattr(m, "__dict__") for v in vars(m).values() if isinstance(v, type)
    }
    errors = {c for c in classes if issubclass(c, BaseException) and c.__module__.startswith("rtsched")}
    assert errors <= {getattr(rtsched, n) for n in rtsched.__all__}


def test_no_function_shadows_its_module():
    import importlib

    assert callable(rtsched.simulate) and importlib.import_module("rtsched.simulation").simulate is rtsched.simulate
    for name in rtsched.__all__:
        obj = getattr(rtsched, name)
        if callable(obj) and not isinstance(obj, type):
            try:
                mod = importlib.import_module(f"rtsched.{name}")
            except ImportError:
                continue
            assert not hasattr(mod, "__file__"), f"rtsched.{name} is both a function and the module {mod.__file__}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from rtsched.simulate import format_table  # the old module path still works, with a warning

    assert format_table is rtsched.simulation.format_table
    assert any("rtsched.simulation" in str(w.message) for w in caught)


def test_gantt_is_a_figure_with_a_window(tmp_path):
    from matplotlib.figure import Figure

    ts = TaskSet([Task(wcet="2ms", period="5ms", name="a"), Task(wcet="3ms", period="7ms")])
    trace = rtsched.simulate_trace(ts, m=1, horizon="35ms")
    assert json.loads(trace.splitlines()[0])["ev"] == "meta"
    fig = rtsched.gantt(trace, title="t")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "time (ms)" and ax.get_xlim() == (0, 35)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:2] == ["τ0 a", "τ1"] and {"release", "deadline", "deadline miss"} <= set(labels)
    part = rtsched.gantt(trace, window="10ms:20ms", path=tmp_path / "g.png")
    assert part.axes[0].get_xlim() == (0, 10) and "since 10 ms" in part.axes[0].get_xlabel()
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    p = tmp_path / "t.jsonl"
    p.write_text(trace)
    assert isinstance(rtsched.gantt(p), Figure)
    for bad in ("20ms:10ms", "10ms", ("1ms",)):
        with pytest.raises(RtschedError, match="window"):
            rtsched.gantt(trace, window=bad)


def test_markers_do_not_hide_each_other():
    """At an implicit deadline the next job is released: the deadline mark (lower half of the
    row) and the release mark (upper half) are at different heights."""
    ts = TaskSet([Task(wcet="1ms", period="4ms")])
    fig = rtsched.gantt(rtsched.simulate_trace(ts, m=1, horizon="12ms"))
    lines = {ln.get_marker(): ln for ln in fig.axes[0].get_lines() if len(ln.get_xdata())}
    rel, dl = lines["^"], lines["v"]
    assert set(np.asarray(rel.get_xdata())) & set(np.asarray(dl.get_xdata()))  # coinciding times...
    assert min(rel.get_ydata()) > max(dl.get_ydata())  # ...drawn apart


def test_simulate_gantt_window_svg_and_png(tmp_path):
    ts = TaskSet([Task(wcet="2ms", period="5ms"), Task(wcet="3ms", period="7ms")])
    s = rtsched.simulate(ts, 1, horizon="70ms", gantt=tmp_path / "w.svg", gantt_window=("14ms", "21ms"))
    svg = (tmp_path / "w.svg").read_text()
    assert s["jobs"] > 0 and svg.startswith("<svg") and ">14ms<" in svg and ">21ms<" in svg
    rtsched.simulate(ts, 1, horizon="70ms", gantt=tmp_path / "w.png", gantt_window="14ms:21ms")
    assert (tmp_path / "w.png").stat().st_size > 0
    with pytest.raises(RtschedError, match="gantt_window"):
        rtsched.simulate(ts, 1, gantt_window="0:1ms")
