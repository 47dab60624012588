"""The one "quick" mark of an experiment's outputs (docs/experiments.md, "The quick mark").

A run with ``--quick`` computes the spec's small ``[quick]`` form, not the paper's experiment,
and every figure and table it writes says so where a reader looks first: the figure's title,
the ``.md`` table's title line and the CSV header (a ``quick`` column, ``true`` on every row,
present only in quick outputs). Every reproduction marks its outputs with these functions and
nothing else, so that one test (tests/test_quick_mark.py) can check them all.
"""

from __future__ import annotations

#: What a quick title ends with.
TITLE_MARK = " (quick)"
#: The CSV column a quick table carries.
CSV_COLUMN = "quick"


def title(text: str, quick: bool) -> str:
    """``text`` with the quick mark when ``quick`` (idempotent: a marked title stays as it is)."""
    if not quick or text.endswith(TITLE_MARK):
        return text
    return text + TITLE_MARK


def first_line(text: str, quick: bool, name: str | None = None) -> str:
    """``text`` (a multi-line table) with its first line, the title, marked when ``quick``: right
    after the name when the line starts ``NAME:`` (where a reader looks), else at its end."""
    head, sep, rest = text.partition("\n")
    if not quick or is_marked_title(head):
        return text
    if name and head.startswith(f"{name}:"):
        return f"{name}{TITLE_MARK}{head[len(name) :]}" + sep + rest
    return title(head, quick) + sep + rest


def is_marked_title(line: str) -> bool:
    """Whether a title line carries the mark (at its end, or after its ``NAME`` before a colon)."""
    return line.endswith(TITLE_MARK) or line.split(":", 1)[0].endswith(TITLE_MARK)


def csv_table(header: list, rows: list, quick: bool) -> tuple[list, list]:
    """The header and rows of a CSV, with a ``quick`` column (``true``) when ``quick``."""
    if not quick or CSV_COLUMN in header:
        return list(header), [list(r) for r in rows]
    return [*header, CSV_COLUMN], [[*r, "true"] for r in rows]


def is_marked_csv(header_line: str) -> bool:
    """Whether a CSV's header line carries the quick column."""
    return CSV_COLUMN in [c.strip() for c in header_line.strip().split(",")]
