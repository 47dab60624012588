"""The one rule for names that become path components of a results folder.

A spec's ``name``, a variant's name (``[variants.NAME]``, ``default_variant``, ``--variant``), a
reproduction's name and a point's id each end up in a file or folder name
(``results/NAME-VARIANT[-quick]/points/ID.parquet``). Each is checked here, once: letters,
digits, ``.``, ``_``, ``-``, starting with a letter or digit, at most 100 characters. So no name
is ever a path (no separator, no ``..``, not absolute, not hidden) and nothing is written outside
the folder the user chose.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import SpecError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")

RULE = "letters, digits, '.', '_', '-', starting with a letter or digit, at most 100 characters; no path separators"


def _show(value: Any) -> str:
    r = repr(value)
    return r if len(r) <= 60 else r[:57] + "..."


def is_path_name(value: Any) -> bool:
    """Whether ``value`` may be used as one path component (see the module's rule)."""
    return isinstance(value, str) and _NAME.match(value) is not None


def path_name(value: Any, where: str) -> str:
    """``value`` if it is a valid name (:func:`is_path_name`); else a :class:`SpecError` whose
    message starts with ``where`` (e.g. ``"s.toml name"``, ``"s.toml variant"``)."""
    if not is_path_name(value):
        raise SpecError(f"{where}: {_show(value)} is not a valid name ({RULE})")
    return value
