"""The command line: generate → analyze → partition, bad input, help text."""

import json
from fractions import Fraction

import pytest
import rtsched


def exact_u(tasks):
    return sum(Fraction(t["wcet"], t["period"]) for t in tasks)


def test_help_for_every_command(cli):
    for cmd in ["generate", "analyze", "partition", "quickstart"]:
        code, out, _ = cli(cmd, "--help")
        assert code == 0 and "usage: rtsched " + cmd in out
        assert out.count("--") >= 2


def test_generate_is_deterministic_and_sized(cli, tmp_path):
    a, b, c = (tmp_path / f"{x}.json" for x in "abc")
    assert cli("generate", "--m", 4, "--n", 10, "--util", 2.5, "--seed", 3, "-o", a)[0] == 0
    assert cli("generate", "--m", 4, "--n", 10, "--util", 2.5, "--seed", 3, "-o", b)[0] == 0
    assert cli("generate", "--m", 4, "--n", 10, "--util", 2.5, "--seed", 4, "-o", c)[0] == 0
    da, db, dc = (json.loads(p.read_text()) for p in (a, b, c))
    assert da == db and da != dc
    assert da["m"] == 4 and len(da["tasks"]) == 10
    # WCETs are rounded to ns, so the exact utilization is within n * 0.5ns / Tmin of the target.
    assert abs(float(exact_u(da["tasks"])) - 2.5) < 1e-6
    assert all(t["wcet"] >= 1 for t in da["tasks"])


def test_generate_count_writes_jsonl(cli, tmp_path):
    out = tmp_path / "many.jsonl"
    code, _, err = cli("generate", "--n", 6, "--util", 1.5, "--count", 50, "--seed", 1, "-o", out)
    assert code == 0, err
    lines = out.read_text().splitlines()
    assert len(lines) == 50 and len(set(lines)) == 50


def test_generate_rejects_bad_parameters(cli):
    code, _, err = cli("generate", "--n", 2, "--util", 3.0)
    assert code == 2 and "error" in err
    code, _, err = cli("generate", "--n", 2, "--util", 1.0, "--periods", "loguniform:10ms")
    assert code == 2 and "period" in err


def test_analyze_json_shape(cli, tmp_path):
    f = tmp_path / "ts.json"
    f.write_text(
        json.dumps(
            {
                "m": 2,
                "tasks": [
                    {"wcet": "2ms", "period": "10ms"},
                    {"wcet": "3ms", "period": "10ms"},
                    {"wcet": "5ms", "period": "20ms", "deadline": "15ms"},
                ],
            }
        )
    )
    code, out, err = cli("analyze", f, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["m"] == 2 and r["n"] == 3
    assert r["utilization"] == 0.75 and "utilization_exact" not in r
    code, out, _ = cli("analyze", f, "--json", "--exact-utilization", "--test", "gfb")
    assert Fraction(json.loads(out)["utilization_exact"]) == Fraction(3, 4)
    for name in ["gfb", "bak", "bcl", "bcl_iterative", "rta", "bar", "gedf", "gedf_srt"]:
        assert name in r["results"], name
        assert set(r["results"][name]) >= {"schedulable", "gave_up"}
    assert r["results"]["gedf"]["schedulable"] is True  # U = 0.75 with tiny tasks: GFB alone accepts
    # Devi-Anderson bounds are for implicit deadlines; this set has a constrained one.
    assert r["results"]["gedf_srt"]["schedulable"] is True and r["results"]["gedf_srt"]["tardiness_ns"] is None
    implicit = rtsched.analyze(rtsched.TaskSet([rtsched.Task(wcet=6, period=10)] * 3), m=2, tests=["gedf_srt"])
    # U = 1.8, Λ = 1: x = (E_1 - C_min) / (m - 0) = (6 - 6) / 2 = 0, so each bound is x + C_i = 6.
    assert implicit["results"]["gedf_srt"]["tardiness_ns"] == [6, 6, 6]
    assert "edf_uni" not in r["results"]
    code, out, _ = cli("analyze", f, "--m", 1, "--test", "edf_uni", "--json")
    assert code == 0 and json.loads(out)["results"]["edf_uni"]["schedulable"] is True


def test_analyze_table_and_errors(cli, tmp_path):
    f = tmp_path / "ts.json"
    f.write_text('{"tasks": [{"wcet": "2ms", "period": "10ms"}]}')
    code, out, err = cli("analyze", f)
    assert code == 2 and "processor count" in err
    code, out, _ = cli("analyze", f, "--m", 2)
    assert code == 0 and "gfb" in out and "schedulable" in out
    code, _, err = cli("analyze", f, "--m", 2, "--test", "nope")
    assert code == 2 and "unknown test" in err
    g = tmp_path / "bad.json"
    g.write_text('{"tasks": [{"wcet": "2ms", "period": "10ms", "dedline": 5}]}')
    code, _, err = cli("analyze", g, "--m", 2)
    assert code == 2 and "task 0" in err and "dedline" in err


def test_analyze_jsonl_batch_in_order(cli, tmp_path):
    sets = rtsched.generate(8, 3.0, seed=5, count=300, m=4)
    f = tmp_path / "b.jsonl"
    rtsched.save(f, sets)
    with open(f, "a") as fh:
        fh.write('{"m": 4, "tasks": [{"wcet": 0, "period": 5}]}\n')
    code, out, err = cli("analyze", f, "--json", "--test", "gfb", "--test", "gedf")
    assert code == 1 and "1 invalid" in err
    lines = [json.loads(x) for x in out.splitlines()]
    assert len(lines) == 301
    assert lines[-1]["line"] == 301 and "wcet" in lines[-1]["error"]
    direct = rtsched.analyze_many(sets, tests=["gfb", "gedf"])
    assert [x["results"] for x in lines[:-1]] == [d["results"] for d in direct]


@pytest.mark.parametrize("heuristic", ["ffd", "wfd", "bfd", "nfd"])
def test_partition_placements_verified_independently(cli, tmp_path, heuristic):
    for seed in range(5):
        ts = rtsched.generate(10, 2.4, seed=seed, m=4)
        f = tmp_path / "ts.json"
        rtsched.save(f, ts)
        code, out, err = cli("partition", f, "--heuristic", heuristic, "--json")
        p = json.loads(out)
        assert code == (0 if p["schedulable"] else 1), err
        seen = [r["task"] for c in p["cpus"] for r in c["reservations"]]
        assert len(seen) == len(set(seen))
        for c in p["cpus"]:
            # Implicit deadlines: exact EDF admission is U <= 1 per processor.
            assert sum(Fraction(r["budget"], r["period"]) for r in c["reservations"]) <= 1
        if p["schedulable"]:
            assert sorted(seen) == list(range(len(ts)))
        else:
            assert "reason" in p
