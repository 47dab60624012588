"""Sweep specs: validation messages, grid expansion, point ids and seed derivation, the registry."""

import hashlib
import json
import random

import pytest
from rtsched.experiments import methods as M
from rtsched.experiments.registry import available, lookup
from rtsched.experiments.spec import SpecError, load_spec, parse_spec

BASE = """
name = "t"
samples = 10
seed = 7
methods = ["ffd", "wfd"]
[generator]
name = "randfixedsum"
periods = "seed004"
[grid]
m = [4]
n = ["m+1", "2m"]
util = [1.0, 2.0]
"""


def spec(extra_top="", grid=None, tail=""):
    text = BASE
    if grid is not None:
        text = text.split("[grid]")[0] + "[grid]\n" + grid
    if extra_top:
        text = extra_top + "\n" + text
    return parse_spec(text + "\n" + tail, "t.toml")


@pytest.mark.parametrize(
    "text, key, table",
    [
        ("sampels = 3\n" + BASE, "sampels", "top level"),
        (BASE.replace("periods =", "period ="), "period", "[generator]"),
        (BASE + "eps = [1]\n", "eps", "[grid]"),
        (BASE.replace("util = [1.0, 2.0]", "util = {from = 1, to = 2, stp = 1}"), "stp", "range"),
        (BASE + '[plot]\npanel = "n"\n', "panel", "[plot]"),
        (BASE + "[quick]\nsamples = 1\nseed = 3\n", "seed", "[quick]"),
        (BASE + "[quick.grid]\nk = [1]\n", "k", "[quick.grid]"),
    ],
)
def test_unknown_keys_are_rejected_naming_key_and_table(text, key, table):
    with pytest.raises(SpecError) as e:
        parse_spec(text, "t.toml")
    msg = str(e.value)
    assert f"unknown key {key!r}" in msg and table in msg and "t.toml" in msg


def test_did_you_mean():
    with pytest.raises(SpecError, match="did you mean 'samples'"):
        parse_spec("sampels = 3\n" + BASE, "t.toml")


@pytest.mark.parametrize(
    "grid, match",
    [
        ("m = [4]\nn = [5]\n", "exactly one of 'util'"),
        ("m = [4]\nn = [5]\nutil = [1.0]\nutil_frac = [0.5]\n", "exactly one of 'util'"),
        ("n = [5]\nutil = [1.0]\n", "'m' is required"),
        ('m = [4]\nn = ["m*m"]\nutil = [1.0]\n', "expression of m"),
        ('m = [3]\nn = ["2.5m"]\nutil = [1.0]\n', "not an integer for m = 3"),
        ('m = [4]\nn = ["m-9"]\nutil = [1.0]\n', "must be >= 1"),
        ("m = [0]\nn = [5]\nutil = [1.0]\n", "processor counts must be >= 1"),
        ("m = [4]\nn = [5]\nutil = [-1.0]\n", "must be > 0"),
        ('m = [4]\nn = [5]\nutil = [1.0]\nepsilon = ["5 parsecs"]\n', "expected a duration"),
        ('m = [4]\nn = [5]\nutil = [1.0]\nepsilon = ["1.5ns"]\n', "whole number of nanoseconds"),
        ("m = [4]\nn = [5]\nutil = {from = 2, to = 1, step = 0.5}\n", "below 'from'"),
        ("m = [4]\nn = [5]\nutil = {from = 1, to = 2, step = 0}\n", "step must be > 0"),
        ('m = [4]\nn = {from = "m", to = "2m", step = 0.5}\nutil = [1.0]\n', "expected an integer"),
        ("m = [4]\nn = [true]\nutil = [1.0]\n", "task count"),
    ],
)
def test_invalid_grids(grid, match):
    with pytest.raises(SpecError, match=match):
        spec(grid=grid)


def test_other_invalid_values():
    with pytest.raises(SpecError, match="not valid TOML"):
        parse_spec("m = [", "t.toml")
    with pytest.raises(SpecError, match="unknown method group '@nope'"):
        parse_spec(BASE.replace('["ffd", "wfd"]', '["@nope"]'), "t.toml")
    with pytest.raises(SpecError, match="not in the spec's methods"):
        spec(tail='[plot]\n[plot.groups]\n"x" = ["ffd", "bfd"]\n')
    with pytest.raises(SpecError, match="x: expected one of"):
        spec(tail='[plot]\nx = "time"\n')
    with pytest.raises(SpecError, match="is not a group"):
        spec(tail='[plot]\npanels = "group"\ncurves = "n"\n[plot.panel_xlim]\nnope = [1, 2]\n')
    with pytest.raises(SpecError, match="samples: must be >= 1"):
        parse_spec("samples = 0\n" + BASE.replace("samples = 10\n", ""), "t.toml")
    with pytest.raises(SpecError, match="umax: must be in"):
        parse_spec(BASE.replace('periods = "seed004"', 'periods = "seed004"\numax = 1.5'), "t.toml")
    with pytest.raises(SpecError, match="needs a \\[quick\\] table"):
        parse_spec(BASE, "t.toml", quick=True)


def test_expansion_and_expressions():
    s = spec(
        grid='m = [8, 4]\nn = ["m+1", "2.5m", 12, {from = "m", to = "m+2", step = 2}]\n'
        'util = [{from = 6.0, to = 8.0, step = 0.1}]\nepsilon = ["0us", "500us", 1000]\n'
    )
    ns = {}
    for p in s.points:
        ns.setdefault(p.params["m"], [])
        if p.params["n"] not in ns[p.params["m"]]:
            ns[p.params["m"]].append(p.params["n"])
    # m = 4 with n = 5 or n = 4 cannot reach U >= 6 (U > n * umax): skipped, and reported
    assert ns == {8: [9, 20, 12, 8, 10], 4: [10, 12, 6]}
    assert {(c["m"], c["n"]) for c, _ in s.skipped} == {(4, 4), (4, 5), (4, 6)}  # n = 6: U > 6 only
    utils = sorted({p.params["util"] for p in s.points})
    assert utils[0] == 6.0 and utils[-1] == 8.0 and len(utils) == 21 and 6.3 in utils  # exact decimals
    assert sorted({p.params["epsilon"] for p in s.points}) == [0, 1000, 500_000]
    assert all("exceeds" in why for _, why in s.skipped)
    assert not any(p.params["util"] > p.params["n"] for p in s.points)
    assert len({p.id for p in s.points}) == len(s.points)


def test_util_frac_scales_with_m():
    s = spec(grid='m = [4, 16]\nn = ["2m"]\nutil_frac = [0.5, 0.95]\n')
    got = {(p.params["m"], p.params["util"]) for p in s.points}
    assert got == {(4, 2.0), (4, 3.8), (16, 8.0), (16, 15.2)}


def expected_seed(base, gen, n, m, util):
    """The derivation as docs/experiments.md states it, written out independently."""
    key = json.dumps(
        {
            "v": "rtsched-seed-v1",
            "seed": base,
            "generator": gen["name"],
            "periods": gen["periods"],
            "umax": gen["umax"],
            "deadlines": gen["deadlines"],
            "n": n,
            "m": m,
            "util": util,
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") >> 1


def test_seed_derivation_matches_documentation_and_ignores_order():
    grid = 'm = [4, 8]\nn = ["m+1", "2m", 20]\nutil = [1.0, 2.5, 3.75]\nepsilon = [0, "100us"]\n'
    s = spec(grid=grid)
    gen = s.generator
    for p in s.points:
        assert p.seed == expected_seed(7, gen, p.params["n"], p.params["m"], p.params["util"])
        assert p.id == hashlib.sha256(p.json.encode()).hexdigest()[:16]
    # the same grid written in another order gives the same points, ids and seeds
    shuffled = 'm = [8, 4]\nn = [20, "2m", "m+1"]\nutil = [3.75, 1.0, 2.5]\nepsilon = ["100us", 0]\n'
    t = spec(grid=shuffled)
    assert {p.id: p.seed for p in s.points} == {p.id: p.seed for p in t.points}
    assert s.hash == t.hash
    # epsilon, methods and the sample count do not change the task sets; the base seed does
    by = {(p.params["m"], p.params["n"], p.params["util"], p.params["epsilon"]): p.seed for p in s.points}
    assert by[(4, 5, 2.5, 0)] == by[(4, 5, 2.5, 100_000)]
    u = parse_spec(BASE.replace("samples = 10", "samples = 99").replace('["ffd", "wfd"]', '["wfd"]'), "t.toml")
    v = spec()
    assert [p.seed for p in u.points] == [p.seed for p in v.points]
    assert not {p.id for p in u.points} & {p.id for p in v.points}
    w = parse_spec(BASE.replace("seed = 7", "seed = 8"), "t.toml")
    assert not {p.seed for p in w.points} & {p.seed for p in v.points}
    assert len({p.seed for p in v.points}) == len(v.points)


def test_quick_overrides_samples_and_grid():
    text = BASE + "[quick]\nsamples = 3\n[quick.grid]\nutil_frac = [0.5]\n"
    full, quick = parse_spec(text, "t.toml"), parse_spec(text, "t.toml", quick=True)
    assert {p.count for p in full.points} == {10} and {p.count for p in quick.points} == {3}
    assert {p.params["util"] for p in quick.points} == {2.0}
    assert {p.params["n"] for p in quick.points} == {5, 8}
    assert full.hash != quick.hash


def test_method_groups_expand_in_order_without_repeats():
    assert M.expand(["@partitioning", "@semi", "spres", "ffd"], "x") == M.GROUPS["semi"] + ["spres"]


def test_registry_lists_names_on_a_typo():
    names = available()
    assert {"spres-fig3", "spres-fig4", "spres-fig5", "spres-fig6"} <= set(names)
    with pytest.raises(SpecError) as e:
        lookup("spres-fig7")
    assert "did you mean" in str(e.value) and "spres-fig3" in str(e.value)


@pytest.mark.parametrize("name", ["spres-fig3", "spres-fig4", "spres-fig5", "spres-fig6"])
@pytest.mark.parametrize("quick", [False, True])
@pytest.mark.parametrize("variant", [None, "text", "artifact"])
def test_shipped_specs_parse(name, quick, variant):
    s = load_spec(lookup(name), quick=quick, variant=variant)
    assert s.points and not s.skipped
    # The default is the published code's reading (docs/reproductions.md).
    assert s.variant == (variant or "artifact")
    periods = "seed004" if s.variant == "text" else "seed004-artifact"
    assert s.generator == {"name": "randfixedsum", "periods": periods, "umax": 1.0, "deadlines": "implicit"}
    want = {"text": ("text", "halving", 4_000_000), "artifact": ("artifact", "divisor", 2_000_000)}[s.variant]
    for p in s.points:
        assert (p.params["variant"], p.params["rp"], p.params["rp_floor"]) == want
    if not quick:
        assert s.samples == 1152  # the published script's SAMPLES = 48 * 2 * 12
    # The two readings are different sweeps.
    other = load_spec(lookup(name), quick=quick, variant="text" if s.variant == "artifact" else "artifact")
    assert other.hash != s.hash


def test_variants_are_checked():
    with pytest.raises(SpecError, match="unknown variant 'artefact'.*did you mean 'artifact'"):
        load_spec(lookup("spres-fig3"), variant="artefact")
    with pytest.raises(SpecError, match=r"no \[variants"):
        parse_spec(BASE, "t.toml", variant="text")
    with pytest.raises(SpecError, match=r"unknown key 'sample'.*variants\.x"):
        spec(extra_top='default_variant = "x"', tail="[variants.x]\nsample = 3\n")
    with pytest.raises(SpecError, match="choose one with --variant"):
        spec(tail="[variants.x]\nsamples = 3\n")
    assert spec(extra_top='default_variant = "x"', tail="[variants.x]\nsamples = 3\n").samples == 3
    with pytest.raises(SpecError, match="rp"):
        spec(tail='[semi]\nrp = "thirds"\n')
    with pytest.raises(SpecError, match="rp_floor"):
        spec(tail="[semi]\nrp_floor = 0\n")
    s = spec(tail='[semi]\nvariant = "text"\nrp_floor = "2ms"\n')
    assert {(p.params["variant"], p.params["rp_floor"]) for p in s.points} == {("text", 2_000_000)}
    assert "variant" not in spec().points[0].params  # specs without [semi] keep their point ids


def test_fig3_matches_the_paper_setup():
    s = load_spec(lookup("spres-fig3"))
    assert s.m == [8]
    assert sorted({p.params["n"] for p in s.points}) == [9, 10, 12, 14, 16, 20, 24, 28, 32]
    utils = sorted({p.params["util"] for p in s.points})
    assert utils[0] == 1.0 and utils[-1] == 7.99  # U = m left out (docs/experiments.md)
    assert {7.92, 7.96, 7.99} <= set(utils)
    # The published script's finest resolution, 0.125% of m, from 7 up.
    top = [u for u in utils if u >= 7.0]
    assert max(b - a for a, b in zip(top, top[1:], strict=False)) <= 0.00125 * 8 + 1e-9
    assert list(s.plot.groups) == [
        "partitioning",
        "semi-partitioning",
        "semi-partitioning + PAF",
        "semi-partitioning + PAF + RP",
    ]
    assert s.plot.groups["partitioning"] == ["wfd", "ffd"]
    f6 = load_spec(lookup("spres-fig6"), variant="text")
    assert f6.plot.groups["semi-partitioning"] == ["wfd", "ffd", "spres-nometa"]
    # The published scripts' Fig. 6: each strategy's smallest rate over its heuristics, per core.
    f6 = load_spec(lookup("spres-fig6"))
    assert f6.plot.groups["semi-partitioning"] == ["spres-nometa"]
    assert {(p.params["switch_rate"], p.params["cascade_rate"]) for p in f6.points} == {("mean-core", "min")}
    f5 = load_spec(lookup("spres-fig5"))
    assert sorted({p.params["epsilon"] for p in f5.points}) == [
        x * 1000 for x in (100, 200, 300, 400, 500, 750, 1000, 2000)
    ]
    f4 = load_spec(lookup("spres-fig4"))
    assert sorted({(p.params["m"], p.params["n"]) for p in f4.points}) == [(4, 8), (16, 32), (24, 48)]


def test_hash_is_order_independent_random():
    rng = random.Random(5)
    ms = [2, 3, 4]
    utils = [0.5, 1.0, 1.5]
    a = spec(grid=f'm = {ms}\nn = ["m+1"]\nutil = {utils}\n')
    rng.shuffle(ms)
    rng.shuffle(utils)
    b = spec(grid=f'm = {ms}\nn = ["m+1"]\nutil = {utils}\n')
    assert a.hash == b.hash
