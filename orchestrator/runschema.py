"""The one schema a stored run is checked against when it is read: run.json (and a running run's host.json files)
as json.loads gives them, before model.py's `from_dict` builds the dataclasses.

The dataclasses' constructors take values as stored, unchecked (a store of 10^5 measurements loads in a fraction of
a second that way); a wrong type there ("created": null, "firmware": 42, a string block size) would surface as a
traceback far away, in whichever reader touched it first. Here every field is checked against the type its
dataclass declares (read from the annotations, so a field added to model.py is checked without a change here), and
the first one that is wrong is named: `BadRun("hosts[3].firmware: a string or null expected, not 42")`.

Two ways to the same answer: a fast one asks only yes or no, the values of a whole run taken column by column (a set
of types per column, built in C: the bulk of a store is its measurement rows); only a run it says no to goes the
slow way, field by field, which names the field (or, where the fast way was stricter than the schema, lets it
pass: a key this version does not know).
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import itertools
import operator
import types
import typing
from typing import Any, Sequence

from orchestrator import kinds
from orchestrator.model import (HOST_FAILED, HOST_OK, HOST_UNREACHABLE, SCHEMA_VERSION, SPEED, CpuFacts, HostResult,
                                Measurement, OpenSSLBuild, OsFacts, Run)

HOST_STATUSES = (HOST_OK, HOST_UNREACHABLE, HOST_FAILED)
HOST_STATUSES_SET = frozenset(HOST_STATUSES)


class BadRun(ValueError):
    """A stored run that does not fit the schema: the message names the field (`hosts[2].cpu.logical_cpus: ...`)."""


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _fail(where: str, wanted: str, value: object) -> BadRun:
    return BadRun(f"{where}: {wanted} expected, not {_describe(value)}")


_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "an array",
          dict: "an object"}


@dataclasses.dataclass(frozen=True)
class _Spec:
    """What one field accepts: the exact types of its value (bool is not an int here), and for a list its items'."""

    types: frozenset[type]
    items: frozenset[type] | None = None  # a list's item types; None: any item
    wanted: str = ""
    record: type | None = None  # a list of records (HostResult.tunnels): each item checked as this dataclass

    def check(self, value: object, where: str) -> None:
        if type(value) not in self.types:
            raise _fail(where, self.wanted, value)
        if self.items is not None and type(value) is list:
            for index, item in enumerate(value):
                if type(item) not in self.items:
                    raise _fail(f"{where}[{index}]", "an object" if self.record else "a string", item)
                if self.record is not None:
                    _record(item, self.record, f"{where}[{index}]")


def _spec_of(hint: Any) -> _Spec | None:
    """The _Spec of a type annotation; None for one this schema does not constrain (Any, an unknown class)."""
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        parts = [_spec_of(arg) for arg in args if arg is not type(None)]
        if any(part is None for part in parts):
            return None
        allowed = frozenset().union(*(part.types for part in parts if part)) | (
            {type(None)} if type(None) in args else set())
        items = next((part.items for part in parts if part and part.items is not None), None)
        wanted = " or ".join(part.wanted for part in parts if part) + (" or null" if type(None) in args else "")
        return _Spec(frozenset(allowed), items, wanted)
    if origin is list:
        if args and isinstance(args[0], type) and dataclasses.is_dataclass(args[0]):
            return _Spec(frozenset({list}), frozenset({dict}), "an array", record=args[0])
        item = _spec_of(args[0]) if args else None
        return _Spec(frozenset({list}), item.types if item else None, "an array")
    if origin is dict:
        return _Spec(frozenset({dict}), None, "an object")
    if hint is float:  # JSON writes 800.0 as 800.0, but a hand-edited or older store may hold 800
        return _Spec(frozenset({float, int}), None, "a number")
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = {type(member.value) for member in hint}
        return _Spec(frozenset(values), None, " or ".join(sorted(_NAMES.get(t, t.__name__) for t in values)))
    if hint in _NAMES:
        return _Spec(frozenset({hint}), None, _NAMES[hint])
    return None


@functools.cache
def _specs(cls: type) -> dict[str, _Spec]:
    """Each field of a dataclass and what it accepts, read from its annotations once."""
    hints = typing.get_type_hints(cls)
    found = {f.name: _spec_of(hints[f.name]) for f in dataclasses.fields(cls)}
    if cls is HostResult:  # rows (schema 3) or objects (1, 2): checked by _rows and check_host, not as records
        found["measurements"] = _Spec(frozenset({list}), None, "an array")
    return {name: spec for name, spec in found.items() if spec is not None}


@functools.cache
def _required(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls)
                 if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)


def _object(value: object, where: str) -> dict[str, object]:
    if type(value) is not dict:
        raise _fail(where, "an object", value)
    return value


def _record(data: dict[str, object], cls: type, where: str, skip: Sequence[str] = ()) -> None:
    """Every known key of a record against its field; the required ones present. Unknown keys pass (newer stores)."""
    specs = _specs(cls)
    for name in _required(cls):
        if name not in data:
            raise BadRun(f"{where}.{name}: missing")
    for name, value in data.items():
        spec = specs.get(name)
        if spec is not None and name not in skip:
            spec.check(value, f"{where}.{name}")


def check_run(data: object, where: str = "run") -> None:
    """run.json as read: raises BadRun naming the first field that does not fit."""
    run = _object(data, where)
    schema = run.get("schema", 0)
    if type(schema) is int and schema > SCHEMA_VERSION:  # before its fields: a newer form may have other ones
        raise BadRun(f"written by a newer sslbench (schema {schema}); upgrade sslbench to read it")
    hosts = run.get("hosts", [])
    if not _fast_run(run):
        _record(run, Run, where, skip=("hosts",))
        if type(hosts) is not list:
            raise _fail(f"{where}.hosts", "an array", hosts)
        for index, host in enumerate(hosts):
            check_host(host, f"hosts[{index}]")
    for index, host in enumerate(hosts if isinstance(hosts, list) else []):  # each checked an object by now
        if isinstance(host, dict):
            _known_kinds(host, f"hosts[{index}]")


def _known_kinds(host: dict[str, object], where: str) -> None:
    """Every measurement's kind is one the registry knows: a row of another kind ("foo") would pass every type
    and stop each reader that asks the registry about it (a report's units, a trend's direction)."""
    known = set(kinds.KINDS)
    fields, measurements = host.get("measurement_fields"), host.get("measurements")
    if not isinstance(measurements, list):
        return
    found: list[tuple[int, object]]
    if isinstance(fields, list):
        if "kind" not in fields:
            return
        column = fields.index("kind")
        if known.issuperset({row[column] for row in measurements if len(row) > column}):  # one set, no tuples
            return
        found = [(index, row[column]) for index, row in enumerate(measurements) if len(row) > column]
    else:
        found = [(index, item.get("kind", SPEED)) for index, item in enumerate(measurements) if isinstance(item, dict)]
    if not known.issuperset(kind for _, kind in found):
        index, kind = next((i, k) for i, k in found if k not in known)
        raise _fail(f"{where}.measurements[{index}].kind", "a benchmark kind (" + ", ".join(sorted(known)) + ")",
                    kind)


def check_host(data: object, where: str = "host") -> None:
    """One host's record (in run.json's hosts, or a host.json)."""
    host = _object(data, where)
    if _fast_host(host):
        _known_kinds(host, where)
        return
    _record(host, HostResult, where, skip=("measurements", "cpu", "os", "openssl"))
    if host.get("status", HOST_OK) not in HOST_STATUSES:
        raise _fail(f"{where}.status", " or ".join(HOST_STATUSES), host.get("status"))
    for name, cls in (("cpu", CpuFacts), ("os", OsFacts), ("openssl", OpenSSLBuild)):
        part = host.get(name)
        if part is not None:
            _record(_object(part, f"{where}.{name}"), cls, f"{where}.{name}")
    fields = host.get("measurement_fields")
    measurements = host.get("measurements", [])
    if type(measurements) is not list:
        raise _fail(f"{where}.measurements", "an array", measurements)
    if fields is None:
        for index, item in enumerate(measurements):
            _record(_object(item, f"{where}.measurements[{index}]"), Measurement, f"{where}.measurements[{index}]")
    else:
        if type(fields) is not list or not all(type(name) is str for name in fields):
            raise _fail(f"{where}.measurement_fields", "an array of names", fields)
        _rows(measurements, fields, f"{where}.measurements")
    _known_kinds(host, where)


_type_row = functools.partial(map, type)


def _rows(rows: list[Any], fields: list[str], where: str) -> None:
    """Measurement rows (schema 3): each row's types as a tuple, the distinct ones checked column by column."""
    if not all(map(list.__instancecheck__, rows)):
        index = next(i for i, row in enumerate(rows) if type(row) is not list)
        raise _fail(f"{where}[{index}]", "a row (an array)", rows[index])
    specs = _specs(Measurement)
    columns = [specs.get(name) for name in fields]
    required = len([name for name in _required(Measurement) if name in fields])
    signatures = set(map(tuple, map(_type_row, rows)))
    for signature in signatures:
        if len(signature) > len(fields) or len(signature) < required:
            index = next(i for i, row in enumerate(rows) if tuple(map(type, row)) == signature)
            raise BadRun(f"{where}[{index}]: {len(signature)} values for {len(fields)} fields "
                         f"({required} required)")
        for column, kind in enumerate(signature):
            spec = columns[column]
            if spec is not None and kind not in spec.types:
                index = next(i for i, row in enumerate(rows) if tuple(map(type, row)) == signature)
                raise _fail(f"{where}[{index}].{fields[column]}", spec.wanted, rows[index][column])
    for column, spec in enumerate(columns):  # the items of list columns (flags): only the rows that reach them
        if spec is not None and spec.items is not None and any(len(s) > column for s in signatures):
            reaching = [row[column] for row in rows if len(row) > column]
            if not spec.items.issuperset(map(type, itertools.chain.from_iterable(reaching))):
                for index, row in enumerate(rows):
                    if len(row) > column:
                        spec.check(row[column], f"{where}[{index}].{fields[column]}")


# The fast path: the same rules as above, asked as yes-or-no with as little Python per value as can be (a store of
# 10^5 measurements is read on every `report`, `trend` and `diff`). Only a "no" goes the slow way above, which
# names the field (or, where the fast path was stricter than the rules, passes).

_JSON_TYPES: frozenset[type] = frozenset({str, int, float, bool, list, dict, type(None)})
_CUT = ()  # zip_longest's fill for the trailing fields a row cut: a tuple, which json.loads never gives


@functools.cache
def _fast_table(cls: type) -> tuple[dict[str, frozenset[type]], frozenset[str], tuple[tuple[str, frozenset[type]], ...]]:
    """Per field its types (any JSON value where this schema checks it elsewhere), the required names, and the
    list fields with their items' types."""
    specs = _specs(cls)
    allowed = {f.name: specs[f.name].types if f.name in specs else _JSON_TYPES for f in dataclasses.fields(cls)}
    if cls is HostResult:
        allowed["measurement_fields"] = frozenset({list})  # the rows' column names (model.HostResult.to_dict)
    lists = tuple((name, spec.items) for name, spec in specs.items() if spec.items is not None)
    return allowed, frozenset(_required(cls)), lists


def _fast_records(records: list[dict[str, object]], cls: type) -> bool:
    """Records of one kind (a run's hosts, their cpu parts, ...), grouped by their keys, each group checked column
    by column: the types of a column's values as one set."""
    allowed, required, lists = _fast_table(cls)
    groups: dict[tuple[str, ...], list[dict[str, object]]] = {}
    for record in records:
        groups.setdefault(tuple(record), []).append(record)
    items_of = dict(lists)
    records_of: dict[str, type] = {name: spec.record for name, spec in _specs(cls).items() if spec.record is not None}
    for keys, group in groups.items():
        if not allowed.keys() >= set(keys) or not required.issubset(keys):
            return False
        for name, column in zip(keys, zip(*map(dict.values, group))):
            kinds = set(map(type, column))
            if not kinds <= allowed[name]:
                return False
            items = items_of.get(name)
            if items is not None and not items.issuperset(map(type, itertools.chain.from_iterable(column))):
                return False
            nested = records_of.get(name)
            if nested is not None and not _fast_records(list(itertools.chain.from_iterable(column)), nested):
                return False
    return True


def _fast_hosts(hosts: list[dict[str, object]], rows: dict[tuple[str, ...], list[Any]]) -> bool:
    """The host records fit; their measurement rows are added to `rows` (by their field names)."""
    if not _fast_records(hosts, HostResult) or not HOST_STATUSES_SET.issuperset(
            [host.get("status", HOST_OK) for host in hosts]):
        return False
    for name, cls in (("cpu", CpuFacts), ("os", OsFacts), ("openssl", OpenSSLBuild)):
        parts = [part for host in hosts if (part := host.get(name)) is not None]
        if not all(map(dict.__instancecheck__, parts)) or not _fast_records(parts, cls):  # type: ignore[arg-type]
            return False
    for host in hosts:
        fields, measurements = host.get("measurement_fields"), host.get("measurements", [])
        if type(fields) is not list or type(measurements) is not list or not all(map(str.__instancecheck__, fields)):
            return False  # objects of schema 1 and 2: the slow way
        rows.setdefault(tuple(fields), []).extend(measurements)
    return True


def _fast_host(host: dict[str, object]) -> bool:
    rows: dict[tuple[str, ...], list[Any]] = {}
    return _fast_hosts([host], rows) and _fast_rows(rows)


def _fast_run(run: dict[str, object]) -> bool:
    hosts = run.get("hosts", [])
    if not _fast_records([run], Run) or type(hosts) is not list or not all(map(dict.__instancecheck__, hosts)):
        return False
    rows: dict[tuple[str, ...], list[Any]] = {}
    return _fast_hosts(hosts, rows) and _fast_rows(rows)


@functools.cache
def _column_table(fields: tuple[str, ...]) -> tuple[tuple[frozenset[type], frozenset[type] | None], ...]:
    specs = _specs(Measurement)
    required = set(_required(Measurement))
    table: list[tuple[frozenset[type], frozenset[type] | None]] = []
    for name in fields:
        spec = specs.get(name)
        kinds = spec.types if spec else _JSON_TYPES
        table.append((kinds if name in required else kinds | frozenset({tuple}), spec.items if spec else None))
    return tuple(table)


def _fast_rows(rows: dict[tuple[str, ...], list[Any]]) -> bool:
    """Every row a list of at most its fields' values, each column's values of its field's types: the rows of a
    whole run turned into columns (zip_longest, in C) and each column's types taken as a set."""
    for fields, group in rows.items():
        if not all(map(list.__instancecheck__, group)):
            return False
        table = _column_table(fields)
        columns = list(itertools.zip_longest(*group, fillvalue=_CUT))
        if len(columns) > len(table):
            return False
        for column, (allowed, items) in zip(columns, table):
            kinds = set(map(type, column))
            if not kinds <= allowed:
                return False
            if items is not None and list in kinds and not items.issuperset(
                    map(type, itertools.chain.from_iterable(column))):
                return False
    return True
