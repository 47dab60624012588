"""Per-task priorities in the task-set file (docs/formats.md, "Fixed priorities (`priority`)")."""

from __future__ import annotations

import json

import pytest
import rtsched

GFP = ["gfp_bc", "gfp_bc_slack", "gfp_guan"]


def _set(ranks: list[int] | None) -> dict:
    # On 2 CPUs every G-FP test rejects this set under DM (deadlines 8, 11, 10, 10) and accepts
    # it under the ranks 0, 1, 2, 3 (found by a search over the 24 orders).
    tasks = [
        {"wcet": 2, "period": 8},
        {"wcet": 6, "period": 11},
        {"wcet": 1, "period": 10},
        {"wcet": 4, "period": 10},
    ]
    if ranks is not None:
        for t, r in zip(tasks, ranks, strict=True):
            t["priority"] = r
    return {"m": 2, "tasks": tasks}


def _analyze(cli, path, *extra):
    code, out, err = cli("analyze", path, "--json", *[a for t in GFP for a in ("--test", t)], *extra)
    assert code == 0, err
    return json.loads(out)["results"]


def test_file_priorities_are_used_and_given_ones_override(cli, tmp_path):
    ranks = [0, 1, 2, 3]
    ranked = tmp_path / "ranked.json"
    ranked.write_text(json.dumps(_set(ranks)))
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(_set(None)))
    from_file = _analyze(cli, ranked)
    given = _analyze(cli, plain, "--priorities", ",".join(map(str, ranks)))
    dm = _analyze(cli, plain)
    assert all(from_file[t]["priorities"] == "file" for t in GFP)
    assert all("priorities" not in given[t] and "priorities" not in dm[t] for t in GFP)
    # The file's ranks are the ranks given on the command line, verdicts and bounds alike.
    strip = {t: {k: v for k, v in r.items() if k != "priorities"} for t, r in from_file.items()}
    assert strip == given
    # ... and they decide something here (else this test could not fail).
    assert all(strip[t]["schedulable"] and not dm[t]["schedulable"] for t in GFP)
    # The command line overrides the file, and says so.
    over = _analyze(cli, ranked, "--priorities", "dm")
    assert all(over[t]["priorities"] == "given-over-file" for t in GFP)
    assert {t: {k: v for k, v in r.items() if k != "priorities"} for t, r in over.items()} == dm
    code, out, _ = cli("analyze", ranked, "--priorities", "dm")
    assert code == 0 and "--priorities overrides the priorities of the task-set file" in out
    code, out, _ = cli("analyze", ranked)
    assert code == 0 and "priorities of the task-set file" in out
    # The Python API reads and keeps them.
    ts = rtsched.load(ranked)
    assert ts.priorities == ranks and ts[1:3].priorities == ranks[1:3]
    r = rtsched.analyze(ts, tests=GFP)
    assert r["results"]["gfp_bc"]["priorities"] == "file"


def test_round_trip_and_one_line_errors(cli, tmp_path):
    ranked = tmp_path / "ranked.json"
    ranked.write_text(json.dumps(_set([1, 1, 0, 5])))
    ts = rtsched.load(ranked)
    again = tmp_path / "again.jsonl"
    rtsched.save(again, [ts, ts])
    assert [x.priorities for x in rtsched.load_many(again)] == [[1, 1, 0, 5]] * 2
    with pytest.raises(rtsched.RtschedError, match=r"task 0: field 'priority': CSV has no priority column"):
        rtsched.save(tmp_path / "x.csv", ts)
    for ranks, want in [
        ([0, None, 1, 2], "task 1: field 'priority': missing (task 0 has one"),
        ([0, -1, 1, 2], "task 1: field 'priority': expected an integer rank"),
        ([0, "high", 1, 2], "task 1: field 'priority': expected an integer rank"),
    ]:
        bad = tmp_path / "bad.json"
        doc = _set([0, 0, 0, 0])
        for t, r in zip(doc["tasks"], ranks, strict=True):
            if r is None:
                del t["priority"]
            else:
                t["priority"] = r
        bad.write_text(json.dumps(doc))
        code, out, err = cli("analyze", bad)
        line = err.strip()
        assert code != 0 and "bad.json" in line and want in line and "\n" not in line, err


def test_simulator_gfp_takes_the_file_priorities(cli, tmp_path):
    ranks = [0, 1, 2, 3]
    ranked = tmp_path / "ranked.json"
    ranked.write_text(json.dumps(_set(ranks)))
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(_set(None)))

    def sim(path, *extra):
        code, out, err = cli("simulate", path, "--scheduler", "gfp", "--horizon", "440ns", "--json", *extra)
        assert code == 0, err
        return json.loads(out), err

    given = "priorities=" + ",".join(map(str, ranks))
    (a, note_a), (b, _), (c, _) = sim(ranked), sim(plain, "--param", given), sim(plain)
    assert a == b and a != c
    assert "priorities from the task set (its `priority` fields)" in note_a
    d, note_d = sim(ranked, "--param", "priorities=dm")
    assert d == c and "priorities=... overrides the task set's own priorities" in note_d
