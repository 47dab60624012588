"""The structure issue 21 asked for, kept: no module circles among the Rust crates' modules or
python/rtsched's, and no public ``Result<_, String>`` in the runtime, policy and trace crates
(scripts/structure_report.py measures all three; docs/design.md says why)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _report() -> dict:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "structure_report.py"), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def test_no_module_circles_and_no_string_errors():
    r = _report()
    assert r["rust_circles"] == {}, r["rust_circles"]
    assert r["python_circles"] == [], r["python_circles"]
    assert r["public_string_errors"] == [], r["public_string_errors"]


def test_the_report_finds_what_it_measures(tmp_path):
    # The checker must be able to fail: a tree with a circle between two sibling modules and a
    # public function returning Result<_, String> is reported.
    src = tmp_path / "crates" / "runtime" / "src"
    src.mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod a;\npub mod b;\n")
    (src / "a.rs").write_text("use crate::b::B;\npub struct A;\npub fn f() -> Result<(), String> { Ok(()) }\n")
    (src / "b.rs").write_text("use crate::a::A;\npub struct B;\n")
    for crate in ("policy", "trace"):
        (tmp_path / "crates" / crate / "src").mkdir(parents=True)
    (tmp_path / "python" / "rtsched").mkdir(parents=True)
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "structure_report.py"), "--json", "--repo", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    r = json.loads(out)
    assert r["rust_circles"] == {"runtime": [["a", "b"]]}
    assert r["public_string_errors"] == ["crates/runtime/src/a.rs:3 fn f"]


def test_the_layers_drawing_lists_each_crates_dependencies():
    """docs/design.md draws the crates with an arrow listing each one's [dependencies] on other
    rtsched crates; the drawing must say what the Cargo.toml files say."""
    import re

    doc = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    drawing = doc.split("```\n", 2)[1]
    crates = ["model", "gen", "analysis", "policy", "trace", "sim", "runtime", "py"]
    # Each box's text, read column-wise: a box starts at "│ NAME " and its arrow follows in it.
    boxes: dict[str, str] = {}
    lines = drawing.splitlines()
    for name in crates:
        for r, line in enumerate(lines):
            for m in re.finditer(r"│ " + name + r"\b", line):
                col = m.start()
                end = line.index("│", col + 1)
                text = []
                for below in lines[r:]:
                    if len(below) <= col or below[col] != "│":
                        break
                    text.append(below[col + 1 : end])
                boxes[name] = " ".join(text)
    for name in crates:
        toml = (ROOT / "crates" / name / "Cargo.toml").read_text(encoding="utf-8")
        deps_section = toml.split("[dependencies]", 1)[1].split("\n[", 1)[0]
        want = set(re.findall(r"^rtsched-([a-z]+)", deps_section, flags=re.M))
        arrow = boxes[name].split("→", 1)[1] if "→" in boxes.get(name, "") else ""
        drawn = {w for w in re.findall(r"[a-z]+", arrow) if w in crates}
        assert drawn == want, f"{name}: drawn → {sorted(drawn)}, Cargo.toml has {sorted(want)}"
