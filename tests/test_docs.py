"""The documentation matches the code: docs/cli.md covers every command and option of the CLI
(each in its own command's section), docs/api.md is what scripts/gen_api_docs.py generates from
the docstrings today, and docs/reproductions.md names only reproductions that exist."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rtsched.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
CLI_MD = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def section(name: str) -> str:
    """The text of `## name` (up to the next `##` heading) in docs/cli.md; a heading may name
    several commands (`## sweep, plot, reproduce`)."""
    for m in re.finditer(r"^## (.+)$", CLI_MD, flags=re.M):
        names = [n.strip(" `") for n in m.group(1).split(",")]
        if name in names:
            end = CLI_MD.find("\n## ", m.end())
            return CLI_MD[m.end() : end if end >= 0 else len(CLI_MD)]
    return ""


def options(p: argparse.ArgumentParser) -> list[str]:
    out = []
    for a in p._actions:
        if a.help == argparse.SUPPRESS or isinstance(a, argparse._HelpAction):
            continue
        longs = [s for s in a.option_strings if s.startswith("--")]
        out += longs or a.option_strings
    return out


@pytest.mark.parametrize("name", sorted(commands()))
def test_cli_md_documents_every_command_and_option(name):
    text = section(name)
    assert text, f"docs/cli.md has no '## {name}' section"
    assert f"rtsched {name}" in text, f"the '## {name}' section of docs/cli.md has no synopsis 'rtsched {name} ...'"
    missing = [o for o in options(commands()[name]) if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)]
    assert not missing, f"docs/cli.md, section '{name}', does not mention: {', '.join(missing)}"


def test_the_check_can_fail():
    assert section("no-such-command") == ""
    p = argparse.ArgumentParser()
    p.add_argument("--an-option-nobody-documented")
    p.add_argument("--hidden", help=argparse.SUPPRESS)
    assert options(p) == ["--an-option-nobody-documented"]


def test_api_reference_is_up_to_date():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_api_docs.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_api_reference_names_every_public_name():
    """Every name of ``rtsched.__all__`` has its entry in docs/api.md (scripts/gen_api_docs.py
    refuses to write or pass --check without one); and the check can fail: a reference without
    ``analyze_table`` and ``run_forkjoin`` is caught."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_api_docs", ROOT / "scripts" / "gen_api_docs.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.undocumented() == []
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    import rtsched

    for name in rtsched.__all__:
        if not name.startswith("__"):
            entry = re.search(rf"^### `(class )?rtsched\.{name}\b", api, flags=re.M)
            assert entry, f"docs/api.md has no entry rtsched.{name}"
    cut = [
        (t, i, [q for q in qs if q not in ("rtsched.analyze_table", "rtsched.run_forkjoin")])
        for t, i, qs in gen.SECTIONS
    ]
    assert gen.undocumented(cut) == ["analyze_table", "run_forkjoin"]


def test_index_md_maps_every_page():
    """docs/index.md links every page of docs/ (a new page without its line fails), and every
    link of it leads to a file that exists."""
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", index)
    assert links, "no links found in docs/index.md"
    broken = [x for x in links if not (ROOT / "docs" / x).exists()]
    assert not broken, f"docs/index.md links files that do not exist: {broken}"
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    missing = sorted(pages - set(links))
    assert not missing, f"docs/index.md does not list: {missing}"
    assert "examples/README.md" in links


def test_reproductions_md_names_only_registered_reproductions():
    from rtsched.experiments.registry import available

    text = (ROOT / "docs" / "reproductions.md").read_text(encoding="utf-8")
    named = set(re.findall(r"rtsched reproduce ([a-z0-9][a-z0-9-]*)", text))
    named |= set(re.findall(r"^### `([a-z0-9-]+)`", text, flags=re.M))
    named |= set(re.findall(r"^\| `([a-z0-9][a-z0-9-]*)`", text, flags=re.M)) - {"quickstart"}
    unknown = named - set(available()) - {"NAME"}
    assert not unknown, f"docs/reproductions.md names reproductions that do not exist: {sorted(unknown)}"
    assert named, "the check found no names at all"


@pytest.mark.parametrize("page", ["README.md", "docs/coming-from.md", "docs/formats.md"])
def test_python_examples_in_the_docs_run(page, tmp_path, monkeypatch):
    """Every ```python block that starts with `import rtsched` runs as written."""
    text = (ROOT / page).read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if b.startswith("import rtsched")]
    assert blocks, f"no runnable example in {page}"
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, page, "exec"), {})


def test_json_and_output_mean_the_same_in_every_command(tmp_path, capsys):
    """--json prints the JSON, -o FILE writes the same JSON (and the table is still printed)."""
    import json

    import rtsched
    from rtsched.cli import main

    f = tmp_path / "ts.json"
    rtsched.save(f, rtsched.TaskSet([rtsched.Task(wcet="2ms", period="10ms"), rtsched.Task(wcet="3ms", period="7ms")]))
    for cmd in (["analyze", str(f), "--m", "2"], ["partition", str(f), "--m", "2"], ["simulate", str(f), "--m", "2"]):
        assert main([*cmd, "--json"]) == 0
        printed = capsys.readouterr().out
        out = tmp_path / f"{cmd[0]}.json"
        assert main([*cmd, "-o", str(out)]) == 0
        table = capsys.readouterr().out

        def parse(text: str, lines: bool):
            return [json.loads(x) for x in text.splitlines() if x.strip()] if lines else json.loads(text)

        lines = cmd[0] == "analyze"
        assert parse(out.read_text(), lines) == parse(printed, lines)
        assert not table.lstrip().startswith(("{", "[")), f"{cmd[0]} -o without --json prints a table"


def test_papers_are_named_by_authors_and_venue_where_users_read():
    """No "seed 00N" in the README, the docs, the CLI's help or the reproductions' descriptions
    (docs/papers.md has the authors and venues)."""
    from rtsched.experiments.registry import available, description

    texts = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    texts |= {f"docs/{p.name}": p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")}
    for name, p in commands().items():
        texts[f"rtsched {name} --help"] = p.format_help()
    texts |= {f"reproduce --list {n}": description(n) for n in available()}
    # "seed 004" names a paper; the preset values seed004, seed001-short (older spellings of
    # bg2016, uni-short) and code identifiers (GlobalTest::SEED001) are not prose.
    bad = [where for where, text in texts.items() if re.search(r"\bseeds?[ -]00[0-4]\b", text, flags=re.I)]
    assert not bad, f"papers named by seed number in: {bad}"
    papers = (ROOT / "docs" / "papers.md").read_text(encoding="utf-8")
    for cite in (
        "Cerqueira et al., RTAS 2014",
        "Brandenburg & Anderson, RTSS 2009",
        "Lelli et al., OSPERT 2011",
        "Nogueira et al., EUC 2012",
        "Brandenburg & Gül, RTSS 2016",
    ):
        assert cite in papers
