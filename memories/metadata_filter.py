"""Filters on what a writer stored in a memory's ``metadata``: one JSON form for search, the
memory list, the compiled file and erasure, over every interface.

The form (docs/metadata.md)::

    {"customer": "orion",                 # equal (a string, number, true/false or null)
     "seats": {"gte": 50},                # gt, gte, lt, lte: numbers, or ISO-8601 text
     "tier": {"in": ["gold", "silver"]},  # one of
     "plan": {"ne": "free"},              # not equal (a memory without the key passes)
     "churn_risk": {"exists": true},      # has the key (false: has it not)
     "or": [{...}, {...}],                # any of these filters
     "not": {...}}                        # not this filter

Keys are AND-ed; ``or``, ``and`` and ``not`` are the operators (a metadata key of that name is
reached inside them: ``{"and": [{"or": "x"}]}``). Keys are top-level metadata keys, compared as
stored: ``"50"`` is not ``50``. Ranges compare numbers with numbers and text with text, so
dates compare in time order when written as ISO-8601 (``2026-03-01``, or UTC times with the
same precision); a value of another type than the bound's never matches.

``parse`` checks a filter and names each broken rule by its path (``metadata.seats.gte``);
``Filter.sql`` writes it as a condition on the ``metadata`` column with bound parameters
(containment, ``@>``, and SQL/JSON path predicates, ``@@``, both of which the column's GIN
index, ``jsonb_path_ops``, serves; ``exists`` with the key operator ``?``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: The operators a key's condition may use.
COMPARISONS = ("gt", "gte", "lt", "lte")
CONDITIONS = ("eq", "ne", "in", "exists", *COMPARISONS)
#: The operators that combine filters.
COMBINATORS = ("and", "or", "not")
#: Bounds: how deep operators nest, how many conditions a filter holds in all, how long a key.
MAX_DEPTH = 4
MAX_CONDITIONS = 256
MAX_KEY_CHARS = 200
MAX_IN_VALUES = 100
_JSONPATH_OPERATOR = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


class FilterError(ValueError):
    """A broken rule of a filter: ``errors`` maps each path to its messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(errors)
        self.errors = errors

    def messages(self) -> list[str]:
        """Each message with the path it is about, as one field's errors (``seats.gte: …``)."""
        return [
            f"{path.lstrip('.')}: {message}" if path else message
            for path, messages in self.errors.items()
            for message in messages
        ]


@dataclass(frozen=True)
class Condition:
    key: str
    operator: str  # one of CONDITIONS
    value: Any


@dataclass(frozen=True)
class Combined:
    operator: str  # and, or, not
    parts: tuple[Filter, ...]


Filter = Condition | Combined


def loaded(value: Any, path: str = "metadata") -> Any:
    """The filter as given: a JSON object, or its JSON text (a command line, a query string, a
    form); FilterError naming ``path`` for text that is not JSON."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError as exc:
        raise FilterError({path: [f"must be a JSON object: {exc}."]}) from exc


def parse_text(value: Any, path: str = "metadata") -> Filter:
    """``parse`` of a filter given as its JSON text (a command line, a query string, a form)
    or as the object itself."""
    return parse(loaded(value, path), path)


def keys_of(found: Filter) -> set[str]:
    """The metadata keys a filter tests (never its values)."""
    if isinstance(found, Combined):
        return set().union(*(keys_of(part) for part in found.parts))
    return {found.key}


def parse(value: Any, path: str = "metadata") -> Filter:
    """The filter ``value`` (the form above), or FilterError naming every broken rule."""
    errors: dict[str, list[str]] = {}
    counted = [0]
    found = _parse(value, path, 0, errors, counted)
    if counted[0] > MAX_CONDITIONS:
        errors.setdefault(path, []).append(
            f"holds {counted[0]} conditions; at most {MAX_CONDITIONS}."
        )
    if errors:
        raise FilterError(errors)
    assert found is not None
    return found


def _parse(
    value: Any, path: str, depth: int, errors: dict[str, list[str]], counted: list[int]
) -> Filter | None:
    if not isinstance(value, Mapping):
        errors.setdefault(path, []).append("must be a JSON object (see docs/metadata.md).")
        return None
    if not value:
        errors.setdefault(path, []).append("must name at least one key or operator.")
        return None
    if depth > MAX_DEPTH:
        errors.setdefault(path, []).append(f"nests operators deeper than {MAX_DEPTH}.")
        return None
    parts: list[Filter] = []
    for key, given in value.items():
        where = f"{path}.{key}"
        if key in ("and", "or"):
            if not isinstance(given, list) or not given:
                errors.setdefault(where, []).append("must be a non-empty list of filters.")
                continue
            inner = [
                _parse(item, f"{where}[{i}]", depth + 1, errors, counted)
                for i, item in enumerate(given)
            ]
            if all(part is not None for part in inner):
                parts.append(Combined(key, tuple(inner)))  # type: ignore[arg-type]
        elif key == "not":
            inner_one = _parse(given, where, depth + 1, errors, counted)
            if inner_one is not None:
                parts.append(Combined("not", (inner_one,)))
        elif message := _key_rule(key):
            errors.setdefault(path, []).append(message)
        else:
            parts += _conditions(key, given, where, errors, counted)
    if len(parts) == 1:
        return parts[0]
    return Combined("and", tuple(parts))


def _key_rule(key: str) -> str | None:
    if len(key) > MAX_KEY_CHARS:
        return f"a metadata key must be at most {MAX_KEY_CHARS} characters."
    if "\x00" in key:
        return "a metadata key must not hold a NUL character."
    return None


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, bool, int, float))


def _conditions(
    key: str, given: Any, where: str, errors: dict[str, list[str]], counted: list[int]
) -> list[Filter]:
    """A key's conditions: a plain value (equal) or an object of operators, each one."""
    if not isinstance(given, Mapping):
        counted[0] += 1
        if not _scalar(given) or isinstance(given, float) and given != given:
            errors.setdefault(where, []).append(
                "must be a string, a number, true, false, null or an object of operators "
                f"({', '.join(CONDITIONS)})."
            )
            return []
        if isinstance(given, str) and "\x00" in given:
            errors.setdefault(where, []).append("must not hold a NUL character.")
            return []
        return [Condition(key, "eq", given)]
    if not given:
        errors.setdefault(where, []).append(f"must name an operator ({', '.join(CONDITIONS)}).")
    found: list[Filter] = []
    for operator, operand in given.items():
        counted[0] += 1
        at = f"{where}.{operator}"
        if operator not in CONDITIONS:
            errors.setdefault(at, []).append(
                f"is not an operator; use one of {', '.join(CONDITIONS)}."
            )
        elif message := _operand_rule(operator, operand):
            errors.setdefault(at, []).append(message)
        else:
            found.append(Condition(key, operator, operand))
    return found


def _operand_rule(operator: str, operand: Any) -> str | None:
    if isinstance(operand, str) and "\x00" in operand:
        return "must not hold a NUL character."
    if operator == "exists":
        return None if isinstance(operand, bool) else "must be true or false."
    if operator == "in":
        if not isinstance(operand, list) or not operand:
            return "must be a non-empty list of values."
        if len(operand) > MAX_IN_VALUES:
            return f"must hold at most {MAX_IN_VALUES} values (got {len(operand)})."
        if not all(_scalar(v) and not (isinstance(v, str) and "\x00" in v) for v in operand):
            return "must hold strings, numbers, true, false or null only."
        return None
    if operator in COMPARISONS:
        if isinstance(operand, bool) or not isinstance(operand, (int, float, str)):
            return "must be a number or text (dates as ISO-8601)."
        if isinstance(operand, float) and (operand != operand or operand in (1e999, -1e999)):
            return "must be a finite number."
        return None
    return None if _scalar(operand) else "must be a string, a number, true, false or null."


def sql(found: Filter, column: str, bind: Callable[[Any], str]) -> str:
    """``found`` as a SQL condition on the JSON column ``column``; ``bind(value)`` returns the
    placeholder of a parameter (named or positional, as the statement uses)."""
    if isinstance(found, Combined):
        inner = [sql(part, column, bind) for part in found.parts]
        if found.operator == "not":
            return f"NOT COALESCE({inner[0]}, false)"
        return "(" + f" {found.operator.upper()} ".join(inner) + ")"
    key, operator, value = found.key, found.operator, found.value
    if operator == "eq":
        return _contains(column, key, value, bind)
    if operator == "ne":
        return f"NOT ({_contains(column, key, value, bind)})"
    if operator == "in":
        return "(" + " OR ".join(_contains(column, key, v, bind) for v in value) + ")"
    if operator == "exists":
        # The key operator, which the metadata index does not serve (``jsonb_path_ops`` keeps
        # no keys alone): a key most memories may have is tested on the candidates the search
        # reads, not by reading the whole index.
        test = f"{column} ? {bind(key)}"
        return test if value else f"NOT ({test})"
    comparison = f"{_path(key)} {_JSONPATH_OPERATOR[operator]} {json.dumps(value)}"
    return f"COALESCE({column} @@ {bind(comparison)}::jsonpath, false)"


def positional(found: Filter, column: str) -> tuple[str, list[Any]]:
    """``sql`` with positional placeholders (``%s``) and its parameters, in order."""
    params: list[Any] = []

    def bind(value: Any) -> str:
        params.append(value)
        return "%s"

    return sql(found, column, bind), params


def named(found: Filter, column: str, params: dict[str, Any]) -> str:
    """``sql`` with named placeholders (``%(metadata_<n>)s``), its parameters added to
    ``params`` (the statement's other named parameters)."""

    def bind(value: Any) -> str:
        name = f"metadata_{len(params)}"
        params[name] = value
        return f"%({name})s"

    return sql(found, column, bind)


def _path(key: str) -> str:
    """The SQL/JSON path of a top-level key (quoted: any key is one member name)."""
    return "$." + json.dumps(key)


def _contains(column: str, key: str, value: Any, bind: Callable[[Any], str]) -> str:
    return f"{column} @> {bind(json.dumps({key: value}))}::jsonb"


def as_json(found: Filter) -> Any:
    """The filter back in its JSON form (what a run or a log records)."""
    if isinstance(found, Combined):
        if found.operator == "not":
            return {"not": as_json(found.parts[0])}
        return {found.operator: [as_json(part) for part in found.parts]}
    return {found.key: found.value if found.operator == "eq" else {found.operator: found.value}}


#: The keys a conversation's memories carry that say who spoke, not what it is about
#: (``memories.commands.message_memories``).
SPEAKER_KEYS = frozenset({"role", "speaker"})


def apart(first: Mapping[str, Any], second: Mapping[str, Any]) -> bool:
    """Whether two memories' metadata say they are about different things: a key both have,
    other than who spoke (``SPEAKER_KEYS``), with different values (two customers, two users,
    two items of a store). Consolidation neither merges nor supersedes across it."""
    shared = (set(first) & set(second)) - SPEAKER_KEYS
    return any(first[key] != second[key] for key in shared)
