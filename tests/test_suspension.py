"""Self-suspending tasks through the Python front and the command line: the generator's
--suspension-ratio (docs/generators.md, "Self-suspension")."""

import json

import pytest
import rtsched


def test_generate_suspension_ratio_matches_the_api_and_its_definition(cli, tmp_path):
    out = tmp_path / "s.jsonl"
    code, _, err = cli(
        "generate", "--n", 5, "--util", 2.0, "--seed", 7, "--count", 20, "--suspension-ratio", 0.25,
        "--suspension-segments", 3, "-o", out, "--quiet",
    )  # fmt: skip
    assert code == 0 and err == ""
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    api = rtsched.generate(5, 2.0, seed=7, count=20, suspension_ratio=0.25, suspension_segments=3)
    assert lines == [json.loads(ts.to_json()) for ts in api]
    plain = rtsched.generate(5, 2.0, seed=7, count=20)
    for ts, base in zip(api, plain, strict=True):
        for t, b in zip(ts, base, strict=True):
            # the base task is unchanged; S = round(R (T - C)); the execution segments sum to C
            assert (t.wcet, t.period, t.deadline) == (b.wcet, b.period, b.deadline)
            s = int(0.25 * (t.period - t.wcet) + 0.5)
            assert t.suspension == s
            segs = t.segments
            assert segs is not None and len(segs) == 5
            assert sum(segs[0::2]) == t.wcet and sum(segs[1::2]) == s
    one = rtsched.generate(5, 2.0, seed=7, suspension_ratio=(0.1, 0.3))
    assert all(0.1 <= t.suspension / (t.period - t.wcet) <= 0.3 + 1e-9 for t in one)
    assert rtsched.generate(5, 2.0, seed=7, suspension_ratio="0.1-0.3") == one


@pytest.mark.parametrize(
    "args, words",
    [
        (["--suspension-ratio", "1.5"], "suspension_ratio"),
        (["--suspension-ratio", "0.3-0.1"], "suspension_ratio"),
        (["--suspension-ratio", "abc"], "suspension_ratio"),
        (["--suspension-ratio", "0.2", "--suspension-segments", "1"], "--suspension-segments"),
        (["--suspension-ratio", "0.2", "-o", "x.csv"], "CSV"),
    ],
)
def test_generate_suspension_bad_input_is_one_line(cli, tmp_path, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("generate", "--n", 3, "--util", 1.0, *args)
    lines = err.strip().splitlines()
    assert code != 0 and out == "" and len(lines) == 1 and words in lines[0], err


def test_generate_api_rejects_bad_ratio():
    with pytest.raises(rtsched.RtschedError, match="suspension_ratio"):
        rtsched.generate(3, 1.0, suspension_ratio=2.0)
    with pytest.raises(rtsched.RtschedError, match="suspension_segments"):
        rtsched.generate(3, 1.0, suspension_ratio=0.2, suspension_segments=1)
