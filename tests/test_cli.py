"""The command line: generate → analyze → partition, bad input, help text. Every check asserts
what was printed or written (compared with the Python API or computed independently), not only
the exit status."""

import csv
import json
import re
from fractions import Fraction

import pytest
import rtsched
from rtsched.cli import build_parser

#: U = 2: no global test accepts it on m = 2; its tardiness is bounded (U <= m); FFD needs 3 CPUs.
HEAVY = {"tasks": [{"wcet": "2ms", "period": "10ms"}] + [{"wcet": "9ms", "period": "10ms"}] * 2}


def exact_u(tasks):
    return sum(Fraction(t["wcet"], t["period"]) for t in tasks)


def subcommands():
    """name -> its argparse parser, from the CLI's own parser."""
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return dict(action.choices)


def test_help_for_every_command(cli):
    cmds = subcommands()
    assert {"generate", "analyze", "partition", "simulate", "quickstart", "run", "sweep", "plot", "reproduce"} <= set(
        cmds
    )
    code, top, _ = cli("--help")
    assert code == 0 and all(name in top for name in cmds)
    for cmd, sub in cmds.items():
        code, out, _ = cli(cmd, "--help")
        assert code == 0 and "usage: rtsched " + cmd in out
        # every option the parser knows is in the help text (hidden ones excepted)
        for action in sub._actions:
            if action.help == "==SUPPRESS==":
                continue
            for opt in action.option_strings:
                assert opt in out, f"{cmd}: {opt} missing from --help"
    code, out, _ = cli("--version")
    assert code == 0 and out.strip() == f"rtsched {rtsched.__version__}"


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


def test_generate_stdout_and_csv_hold_the_same_set(cli, tmp_path):
    code, out, err = cli("generate", "--n", 3, "--util", 1.2, "--seed", 1, "--m", 2)
    assert code == 0 and err == ""
    printed = json.loads(out)
    assert out.count("\n") == 1 and printed["m"] == 2 and len(printed["tasks"]) == 3
    api = rtsched.generate(3, 1.2, seed=1, m=2)
    api = api if isinstance(api, rtsched.TaskSet) else api[0]
    assert printed == json.loads(api.to_json())
    f = tmp_path / "g.csv"
    assert cli("generate", "--n", 3, "--util", 1.2, "--seed", 1, "-o", f) == (0, "", "")
    rows = list(csv.DictReader(f.open()))
    assert [{k: int(v) for k, v in r.items()} for r in rows] == [
        {"wcet": t["wcet"], "period": t["period"], "deadline": t["deadline"]} for t in printed["tasks"]
    ]


def test_generate_count_writes_jsonl(cli, tmp_path):
    out = tmp_path / "many.jsonl"
    code, stdout, err = cli("generate", "--n", 6, "--util", 1.5, "--count", 50, "--seed", 1, "-o", out)
    assert code == 0 and stdout == "" and err == ""
    lines = out.read_text().splitlines()
    assert len(lines) == 50 and len(set(lines)) == 50
    sets = [json.loads(x) for x in lines]
    assert all(len(d["tasks"]) == 6 and abs(float(exact_u(d["tasks"])) - 1.5) < 1e-6 for d in sets)
    # set i depends only on (seed, i): the API and a shorter --count give the same first sets
    assert sets == [json.loads(ts.to_json()) for ts in rtsched.generate(6, 1.5, seed=1, count=50)]
    few = tmp_path / "few.jsonl"
    assert cli("generate", "--n", 6, "--util", 1.5, "--count", 10, "--seed", 1, "-o", few)[0] == 0
    assert few.read_text().splitlines() == lines[:10]


def one_error_line(err: str, cmd: str) -> str:
    """The single line a command prints on bad input."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"rtsched {cmd}: error: "), err
    return lines[0]


def test_generate_rejects_bad_parameters(cli):
    code, out, err = cli("generate", "--n", 2, "--util", 3.0)
    line = one_error_line(err, "generate")
    assert code == 2 and out == ""
    # U = 3 cannot be split over n = 2 tasks of utilization at most 1: the message gives the numbers
    assert "utilization 3" in line and "2" in line.split("utilization 3", 1)[1]
    code, out, err = cli("generate", "--n", 2, "--util", 1.0, "--periods", "loguniform:10ms")
    line = one_error_line(err, "generate")
    assert code == 2 and out == ""
    assert "'periods'" in line and "loguniform:10ms" in line and "MIN-MAX" in line


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


def table_verdicts(out: str) -> dict:
    """test name -> verdict word of `rtsched analyze`'s table for one task set."""
    rows = {}
    for line in out.splitlines()[1:]:
        mt = re.match(r"^  (\S+)\s+(schedulable|not schedulable|gave up|-)(\s|$)", line)
        assert mt, line
        rows[mt.group(1)] = mt.group(2)
    return rows


def api_word(r: dict) -> str:
    if r.get("gave_up"):
        return "gave up"
    return {True: "schedulable", False: "not schedulable", None: "-"}[r.get("schedulable")]


def test_analyze_table_and_errors(cli, tmp_path):
    f = tmp_path / "ts.json"
    f.write_text('{"tasks": [{"wcet": "2ms", "period": "10ms"}]}')
    code, out, err = cli("analyze", f)
    assert code == 2 and out == "" and "processor count" in one_error_line(err, "analyze")
    code, out, _ = cli("analyze", f, "--m", 2)
    assert code == 0 and out.splitlines()[0].startswith("n = 1, m = 2, U = 0.2000")
    api = rtsched.analyze(rtsched.load(f), m=2)["results"]
    assert table_verdicts(out) == {name: api_word(r) for name, r in api.items()}
    assert table_verdicts(out)["gfb"] == "schedulable"  # U = 0.2 on two processors
    # a set no global test accepts (U = 2 on m = 2), with a tardiness bound (U <= m)
    h = tmp_path / "heavy.json"
    h.write_text(json.dumps(HEAVY))
    code, out, _ = cli("analyze", h, "--m", 2)
    verdicts = table_verdicts(out)
    assert code == 0 and out.splitlines()[0].startswith("n = 3, m = 2, U = 2.0000")
    assert all(verdicts[t] == "not schedulable" for t in ("gfb", "bak", "bcl", "rta", "gedf", "pedf_ffd"))
    assert verdicts["gedf_srt"] == "schedulable" and verdicts["spres"] == "schedulable"
    heavy = rtsched.analyze(rtsched.load(h), m=2, tests=["gedf_srt"])["results"]["gedf_srt"]
    assert f"(max tardiness bound {rtsched.format_time(max(heavy['tardiness_ns']))})" in out
    code, out, err = cli("analyze", f, "--m", 2, "--test", "nope")
    line = one_error_line(err, "analyze")
    assert code == 2 and out == "" and "unknown test" in line and '"nope"' in line
    assert all(t in line for t in rtsched.tests_available())  # the message lists the known tests
    g = tmp_path / "bad.json"
    g.write_text('{"tasks": [{"wcet": "2ms", "period": "10ms", "dedline": 5}]}')
    code, out, err = cli("analyze", g, "--m", 2)
    line = one_error_line(err, "analyze")
    assert code == 2 and out == "" and "task 0" in line and "dedline" in line and str(g) in line


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


@pytest.mark.parametrize("heuristic", ["pedf_ffd", "pedf_wfd", "pedf_bfd", "pedf_nfd", "ffd", "wfd"])
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


def test_partition_table_matches_the_json(cli, tmp_path):
    f = tmp_path / "ts.json"
    f.write_text(json.dumps(HEAVY))
    code, out, err = cli("partition", f, "--m", 3)
    assert code == 0, err
    code_j, out_j, _ = cli("partition", f, "--m", 3, "--json")
    p = json.loads(out_j)
    assert code_j == 0 and p["schedulable"] and p["m"] == 3
    lines = out.splitlines()
    # No --heuristic: the default (pedf_wfd, what run and simulate use for pedf), named as such.
    assert p["heuristic"] == "pedf_wfd"
    default = "(the default, as run and simulate place pedf; --heuristic picks another)"
    assert lines[0] == f"placed by {p['heuristic']} on 3 processors {default}"
    # each CPU line is followed by its reservations, as in the JSON
    shown: dict = {}
    cpu = None
    for line in lines[1:]:
        mt = re.match(r"^  cpu (\d+):( idle)?$", line)
        if mt:
            cpu = int(mt.group(1))
            shown[cpu] = []
            continue
        mt = re.match(r"^    task (\d+): budget (.+), period (.+), deadline (.+)$", line)
        assert mt and cpu is not None, line
        shown[cpu].append((int(mt.group(1)), mt.group(2), mt.group(3), mt.group(4)))
    # times in the table are in units for people (rtsched.format_time); the JSON keeps ns
    assert shown == {
        c["cpu"]: [
            (r["task"], *(rtsched.format_time(r[k]) for k in ("budget", "period", "deadline")))
            for r in c["reservations"]
        ]
        for c in p["cpus"]
    }
    # WFD with exact EDF admission: the two 0.9 tasks need their own processors
    assert sorted(len(v) for v in shown.values()) == [1, 1, 1]
    code, out, err = cli("partition", f, "--m", 2)
    assert code == 1 and err == ""
    assert out.startswith("not placed (pedf_wfd") and "task 0" in out and "2 processors" in out
