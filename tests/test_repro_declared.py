"""Every shipped reproduction spec is declared (a frozen dataclass per table, ``fields.read_keys``):
an unknown key, a missing required key and a wrongly typed value are each refused in one line
naming the file and the key, and the shipped specs parse to the points they always did."""

import dataclasses
import json

import pytest
from rtsched.experiments import fields
from rtsched.experiments.errors import SpecError
from rtsched.experiments.registry import REPRODUCTIONS, SHIPPED_SPECS, engines, module
from rtsched.experiments.spec import tomllib

NAMES = sorted(REPRODUCTIONS)
#: (name, engine) of every shipped spec and every engine it has besides its default.
CASES = [(n, None) for n in NAMES] + [(n, e) for n in NAMES for e in list(engines(module(n)))[1:]]


def _value(v) -> str:
    """One TOML value on one line (inline tables and arrays)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    assert isinstance(v, dict), v
    return "{" + ", ".join(f"{json.dumps(k)} = {_value(x)}" for k, x in v.items()) + "}"


def dump(data: dict) -> str:
    return "".join(f"{json.dumps(k)} = {_value(v)}\n" for k, v in data.items())


def _spec(name):
    mod = module(name)
    path = SHIPPED_SPECS / mod.SPEC
    return mod, str(path), tomllib.loads(path.read_text(encoding="utf-8"))


def _parse(mod, text, path, engine):
    return mod.parse(text, path) if engine is None else mod.parse(text, path, engine=engine)


def _keys(mod, engine):
    """The declared top level the spec is read into on ``engine``."""
    return mod.KEYS if engine is None else engines(mod)[engine].Keys


def _put(data, engine, key, value):
    """``data`` with ``key`` set where ``engine`` reads it (its [engines.E] table, if it sets it)."""
    table = data.get("engines", {}).get(engine, {})
    if engine is not None and key in table:
        return {**data, "engines": {**data["engines"], engine: {**table, key: value}}}
    return {**data, key: value}


def _without(data, key):
    """``data`` without ``key``, at the top level and in every engine's table."""
    out = {k: v for k, v in data.items() if k != key}
    if "engines" in out:
        out["engines"] = {e: {k: v for k, v in t.items() if k != key} for e, t in out["engines"].items()}
    return out


def _refused(mod, text, path, engine=None) -> str:
    with pytest.raises(SpecError) as e:
        _parse(mod, text, path, engine)
    msg = str(e.value)
    assert "\n" not in msg and path in msg, msg
    return msg


@pytest.mark.parametrize("name, engine", CASES)
def test_the_writer_of_these_tests_keeps_each_spec(name, engine):
    # The tests below edit a spec through dump(); unedited, it parses to the same points.
    mod, path, data = _spec(name)
    text = (SHIPPED_SPECS / mod.SPEC).read_text(encoding="utf-8")
    assert _parse(mod, dump(data), path, engine).hash == _parse(mod, text, path, engine).hash


@pytest.mark.parametrize("name, engine", CASES)
def test_an_unknown_key_is_refused_naming_file_and_key(name, engine):
    mod, path, data = _spec(name)
    msg = _refused(mod, dump({**data, "bogus_key": 1}), path, engine)
    assert f"unknown key 'bogus_key' in the top level of {path}" in msg


@pytest.mark.parametrize("name, engine", CASES)
def test_a_missing_required_key_is_refused_naming_file_and_key(name, engine):
    mod, path, data = _spec(name)
    required = [
        f.name
        for f in dataclasses.fields(_keys(mod, engine))
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    assert required, f"{name}: its spec declares no required key"
    for key in required:
        assert key in data, (name, key)
        msg = _refused(mod, dump(_without(data, key)), path, engine)
        assert msg.startswith(f"{path}: ") and msg.endswith("is required"), msg
        assert repr(key) in msg or f"[{key}]" in msg, msg


@pytest.mark.parametrize("name, engine", CASES)
@pytest.mark.parametrize("key, bad", [("samples", "many"), ("description", 5), ("seed", 1.5)])
def test_a_wrongly_typed_value_is_refused_naming_file_and_key(name, engine, key, bad):
    mod, path, data = _spec(name)
    assert key in fields.key_names(_keys(mod, engine))
    msg = _refused(mod, dump(_put(data, engine, key, bad)), path, engine)
    assert f"{path} {key}: expected" in msg


def test_read_keys_types_and_defaults():
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class T:
        a: int
        b: list[str] = fields.spec_key(factory=list)
        c: float | None = None
        d: int = fields.spec_key(3, parse=lambda v, w: fields.integer_at_least(v, w, 2))

    t = fields.read_keys(T, {"a": 1, "c": 2}, "f.toml")
    assert (t.a, t.b, t.c, t.d) == (1, [], 2, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.a = 2  # type: ignore[misc]
    for table, msg in (
        ({"a": True}, "f.toml a: expected an integer, got True"),
        ({"a": 1, "b": ["x", 2]}, "f.toml b: expected a list of strings"),
        ({"a": 1, "c": "x"}, "f.toml c: expected a number"),
        ({"a": 1, "d": 1}, "f.toml d: must be >= 2"),
        ({}, "f.toml: key 'a' is required"),
        ({"a": 1, "bb": 2}, "unknown key 'bb' in the top level of f.toml (did you mean 'b'?)"),
    ):
        with pytest.raises(SpecError) as e:
            fields.read_keys(T, table, "f.toml")
        assert msg in str(e.value)
    with pytest.raises(SpecError, match=r"unknown key 'x' in table \[grid\] of f.toml"):
        fields.read_keys(T, {"a": 1, "x": 0}, "f.toml", "grid")
    with pytest.raises(SpecError, match=r"f.toml \[grid\]: key 'a' is required"):
        fields.read_keys(T, {}, "f.toml", "grid")
