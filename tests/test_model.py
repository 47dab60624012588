"""The model through Python: construction, validation messages, file formats."""

import pytest
import rtsched
from rtsched import RtschedError, Task, TaskSet


def test_task_accepts_units_and_defaults():
    t = Task(wcet="1ms", period="10ms")
    assert (t.wcet, t.period, t.deadline) == (1_000_000, 10_000_000, 10_000_000)
    t = Task(wcet=500, period="2us", deadline="1.5us", name="ctl")
    assert t.deadline == 1500 and t.name == "ctl"
    assert t.utilization == pytest.approx(0.25)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(wcet=0, period=10), "wcet"),
        (dict(wcet=1, period="0ms"), "period"),
        (dict(wcet=1, period=10, deadline="3 weeks"), "deadline"),
        (dict(wcet=-1, period=10), "wcet"),
        (dict(wcet=1.5, period=10), "wcet"),
    ],
)
def test_task_validation_names_field(kwargs, field):
    with pytest.raises(RtschedError, match=f"'{field}'"):
        Task(**kwargs)


def test_error_is_value_error():
    assert issubclass(RtschedError, ValueError)


def test_taskset_json_round_trip(tmp_path):
    ts = TaskSet([Task(wcet="1ms", period="4ms"), Task(wcet=3, period=7, deadline=5, name="b")], m=2)
    assert len(ts) == 2 and ts.m == 2 and ts[1].name == "b" and ts[-1].deadline == 5
    again = TaskSet.from_json(ts.to_json())
    assert again == ts
    path = tmp_path / "x.json"
    rtsched.save(path, ts)
    assert rtsched.load(path) == ts and rtsched.load_many(path) == [ts]
    num, den = ts.utilization_exact()
    assert int(num) * 28 == int(den) * 19  # 1/4 + 3/7 = 19/28


def test_unknown_key_rejected_with_task_index():
    with pytest.raises(RtschedError, match=r"task 1: field 'perod': unknown key"):
        TaskSet.from_json('{"tasks": [{"wcet": 1, "period": 2}, {"wcet": 1, "perod": 2}]}')


def test_jsonl_and_csv(tmp_path):
    p = tmp_path / "sets.jsonl"
    p.write_text('{"tasks": [{"wcet": 1, "period": 2}]}\n\n{"m": 3, "tasks": [{"wcet": "1us", "period": "2us"}]}\n')
    sets = rtsched.load_many(p)
    assert [len(s) for s in sets] == [1, 1] and sets[1].m == 3 and sets[1][0].wcet == 1000
    with pytest.raises(RtschedError, match="holds 2 task sets; rtsched.load reads one, rtsched.load_many a batch"):
        rtsched.load(p)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"tasks": [{"wcet": 1, "period": 2}]}\n{"tasks": [{"wcet": 0, "period": 2}]}\n')
    with pytest.raises(RtschedError, match=r"line 2: task 0: field 'wcet'"):
        rtsched.load_many(bad)
    c = tmp_path / "t.csv"
    c.write_text("wcet,period,deadline\n1ms,10ms,\n2,5,4\n")
    ts = rtsched.load(c)
    assert ts[0].deadline == 10_000_000 and ts[1].deadline == 4
    assert TaskSet.from_csv(ts.to_csv()) == ts


def test_unknown_extension_and_missing_file(tmp_path):
    with pytest.raises(RtschedError, match="extension"):
        rtsched.load(tmp_path / "x.txt")
    with pytest.raises(RtschedError, match="cannot read"):
        rtsched.load(tmp_path / "missing.json")


def test_durations():
    assert rtsched.parse_duration("1.5s") == 1_500_000_000
    assert rtsched.format_duration(2_000_000) == "2ms"
    with pytest.raises(RtschedError):
        rtsched.parse_duration("0.5ns")


def test_hyperperiod_bound():
    ts = TaskSet([Task(1, 4), Task(1, 6)])
    assert ts.hyperperiod() == 12
    with pytest.raises(RtschedError, match="bound"):
        ts.hyperperiod(10)


def test_self_suspending_task_segments(tmp_path):
    """The segmented self-suspension model (docs/formats.md): built, read, written, pickled."""
    import copy
    import pickle

    t = Task(wcet="3ms", period="20ms", name="cam", segments=["1ms", "2ms", "1.5ms", ("1ms", "4ms"), "0.5ms"])
    assert t.segments == [1_000_000, 2_000_000, 1_500_000, (1_000_000, 4_000_000), 500_000]
    assert t.suspension == 6_000_000
    assert eval(repr(t), {"Task": Task}) == t
    assert pickle.loads(pickle.dumps(t)) == t and copy.deepcopy(t) == t
    plain = Task(wcet=3, period=9)
    assert plain.segments is None and plain.suspension == 0
    assert Task(wcet=3, period=9, segments=[3]) == plain
    assert Task(wcet=3, period=9, segments=[1, {"min": 1, "max": 2}, 2]).segments == [1, (1, 2), 2]
    ts = TaskSet([t, plain], m=2)
    assert TaskSet.from_json(ts.to_json()) == ts and ts[0].suspension == 6_000_000
    path = tmp_path / "s.json"
    rtsched.save(path, ts)
    assert rtsched.load(path) == ts
    with pytest.raises(RtschedError, match=r'task 0 \("cam"\): field .segments.: CSV has no column'):
        ts.to_csv()


@pytest.mark.parametrize(
    "segments, words",
    [
        ([1, 2], "odd length"),
        ([1, 2, 1], "sum to 2 ns, but wcet is 3 ns"),
        ([1, 0, 2], r"entry 1 \(suspension\): the upper bound must be at least 1 ns"),
        ([1, (3, 2), 2], "lower bound 3 ns exceeds the upper bound 2 ns"),
        ([1, "2", 2], r"entry 1 \(suspension\): duration '2' has no unit|entry 1 \(suspension\): duration \"2\""),
        ([1, {"max": 2, "mn": 1}, 2], "unknown key"),
        ("1ms", "expected a list"),
    ],
)
def test_bad_segments_name_the_field(segments, words):
    with pytest.raises(RtschedError, match=words) as e:
        Task(wcet=3, period=9, segments=segments)
    assert "field 'segments'" in str(e.value) and "\n" not in str(e.value)
