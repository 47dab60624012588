"""Method names and method groups of the Brandenburg & Gül, RTSS 2016 reproductions, kept in one place.

Method names are passed through verbatim to the evaluator (``rtsched._core.evaluate_point``);
the experiment engine itself attaches no meaning to them. The groups below follow the cascade of
Brandenburg & Gül, "Global Scheduling Not Required: Simple, Near-Optimal Multiprocessor Real-Time
Scheduling with Semi-Partitioned Reservations", RTSS 2016, §IV-B and §V: each group is cumulative
("any of these heuristics succeeded"), exactly as the paper's Fig. 3 panels are defined:

- (a) partitioning: WFD or FFD;
- (b) semi-partitioning: any heuristic of §IV-B, without meta-heuristics;
- (c) + PAF: additionally the six PAF instantiations (h2 = 2WFD-C=D, h1 as named);
- (d) + PAF + RP: the whole cascade ("spres"), which also runs the RP meta-heuristic.

A spec refers to a group as ``"@name"`` wherever it lists methods (``methods`` and the values of
``[plot.groups]``), so the four figure specs do not repeat these names. ``"@dag"`` is the DAG
tests (docs/dag.md) that apply to sets of several tasks, for sweeps of DAG task sets.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .errors import SpecError

# WFD before FFD: the order of the cascade (§IV-B "starting with WFD and FFD"), so a group's
# switch rate (that of its first member that placed the set) is the cascade's placement.
PARTITIONING = ["wfd", "ffd"]
SEMI_HEURISTICS = ["ffd-c=d", "wfd-c=d", "wfd-c=d-ms", "2wfd-c=d", "wwfd", "fwfd", "wffd", "fffd"]
PAF = ["paf-ffd-c=d", "paf-2wfd-c=d", "paf-wwfd", "paf-fwfd", "paf-wffd", "paf-fffd"]
CASCADE = "spres"
# The cascade without the meta-heuristics: succeeds iff some basic heuristic does, so the groups
# "semi" and "semi-cascade" accept the same sets; the cascade stops at the first success, which
# makes it several times cheaper than running every heuristic on every set.
CASCADE_NO_META = "spres-nometa"
# The cascade up to and including PAF, without RP: succeeds iff a basic heuristic or a PAF
# instantiation does (the union that panel (c) plots), at the cost of its first success.
CASCADE_PAF = "spres-paf"

GROUPS: dict[str, list[str]] = {
    "partitioning": list(PARTITIONING),
    "semi": PARTITIONING + SEMI_HEURISTICS,
    "semi-cascade": PARTITIONING + [CASCADE_NO_META],
    "semi-paf": PARTITIONING + SEMI_HEURISTICS + PAF,
    "paf-cascade": PARTITIONING + [CASCADE_NO_META, CASCADE_PAF],
    "spres": [CASCADE],
}


#: The group of the DAG tests (docs/dag.md) that apply to sets of several tasks: read from the
#: Rust core's table (``rtsched_analysis::dag::report``) when a spec names it, so that a DAG
#: test added there joins every sweep that names ``"@dag"``.
DAG_GROUP = "dag"


def _group(name: str) -> list[str] | None:
    if name == DAG_GROUP:
        from .. import _core

        return list(_core.dag_test_names(True))
    return GROUPS.get(name)


def expand(items: Iterable[Any], where: str) -> list[str]:
    """Expand ``"@group"`` references in a list of method names, keeping order, dropping repeats."""
    out: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise SpecError(f"{where}: a method must be a non-empty string, got {item!r}")
        if item.startswith("@"):
            group = _group(item[1:])
            if group is None:
                known = ", ".join("@" + g for g in [*GROUPS, DAG_GROUP])
                raise SpecError(f"{where}: unknown method group {item!r} (known: {known})")
            names = group
        else:
            names = [item]
        for x in names:
            if x not in out:
                out.append(x)
    return out
