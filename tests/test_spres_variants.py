"""The two readings of Brandenburg & Gül, RTSS 2016 (docs/spres.md, "Paper text versus paper
code") through the CLI and the Python API: the heuristic that places Fig. 1 differs as the
cascade orders differ, the RP options are accepted and checked, bad values are refused with
one line naming the field."""

import json
from pathlib import Path

import pytest
import rtsched

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
MS = 1_000_000


def _split_parts(p):
    return sorted(
        (r["task"], r["part"], r["budget"], r["deadline"], r["offset"])
        for c in p["cpus"]
        for r in c["reservations"]
        if r["parts"] > 1
    )


def test_fig1_under_each_variant(cli):
    # Text: WFD-C=D (the first semi-partitioning heuristic of the text's cascade) splits task 2,
    # as in the paper's Fig. 1. Artifact: the script's order tries FFD-C=D first, which fills
    # CPU 0 with task 0 and splits task 1 there.
    code, out, err = cli(
        "partition", EXAMPLES / "spres-fig1.json", "--heuristic", "spres", "--variant", "text", "--json"
    )
    assert code == 0, err
    p = json.loads(out)
    assert p["heuristic"] == "WFD-C=D"
    assert _split_parts(p) == [(2, 1, 5 * MS, 10 * MS, 0), (2, 2, 5 * MS, 5 * MS, 10 * MS)]
    code, out, err = cli("partition", EXAMPLES / "spres-fig1.json", "--heuristic", "spres", "--json")
    assert code == 0, err
    p = json.loads(out)
    assert p["heuristic"] == "FFD-C=D"
    assert _split_parts(p) == [(1, 1, 5 * MS, 10 * MS, 0), (1, 2, 5 * MS, 5 * MS, 10 * MS)]


def test_rp_options_place_a_set_that_needs_rp(cli, tmp_path):
    # A set (U = 2.93 on 3 CPUs) that only the RP meta-heuristic places.
    ct = [(219492136, 250000000), (7288171, 10000000), (21352330, 25000000), (12323820, 25000000)]
    ts = rtsched.TaskSet([rtsched.Task(wcet=c, period=t) for c, t in ct])
    f = tmp_path / "rp.json"
    rtsched.save(f, ts)
    for extra, divisor in (
        ([], True),
        (["--rp", "halving"], False),
        (["--variant", "text"], False),
        (["--rp-floor", "2ms"], True),
    ):
        code, out, err = cli("partition", f, "--m", 3, "--heuristic", "spres", "--json", *extra)
        assert code == 0, (extra, err)
        p = json.loads(out)
        assert p["heuristic"].startswith("RP("), (extra, p["heuristic"])
        ks = {t["task"]: t["period_ratio"] for t in p["tasks"]}
        assert max(ks.values()) > 1
        for c in p["cpus"]:
            for r in c["reservations"]:
                t = ct[r["task"]][1]
                k = ks[r["task"]]
                if divisor:
                    assert r["period"] * k == t, extra  # a divisor of T from the paper's set
                else:
                    assert r["period"] == t // k, extra
    code, _, _ = cli("partition", f, "--m", 3, "--heuristic", "spres", "--no-meta")
    assert code == 1


@pytest.mark.parametrize(
    "args, field",
    [
        (["--rp", "quartering"], "--rp"),
        (["--variant", "draft"], "--variant"),
        (["--rp-floor", "0"], "rp_floor"),
        (["--rp-floor", "2 weeks"], "duration"),
    ],
)
def test_bad_options_are_refused(cli, args, field):
    code, _, err = cli("partition", EXAMPLES / "spres-fig1.json", "--heuristic", "spres", *args)
    assert code == 2
    # argparse prints its usage first; the error itself is the last line.
    assert field in err.strip().splitlines()[-1] and "Traceback" not in err


def test_api_options_and_layout():
    ts = rtsched.load(EXAMPLES / "spres-fig1.json")
    p = rtsched.partition(ts, 2, "spres", variant="text", slice_order="deadline-desc")
    assert p["schedulable"] and p["heuristic"] == "WFD-C=D"
    # Deadline order: the 10 ms window (part with laxity) before the 5 ms chunk either way here.
    assert _split_parts(p) == [(2, 1, 5 * MS, 10 * MS, 0), (2, 2, 5 * MS, 5 * MS, 10 * MS)]
    merged = rtsched.partition(ts, 2, "spres", merge_same_core=True, rp="halving", rp_floor="4ms")
    assert merged["schedulable"]
    with pytest.raises(ValueError, match="slice_order"):
        rtsched.partition(ts, 2, "spres", slice_order="random")
    with pytest.raises(ValueError, match="variant"):
        rtsched.partition(ts, 2, "spres", variant="artefact")
