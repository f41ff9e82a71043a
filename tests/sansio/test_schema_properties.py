"""Property: every request, notification and result the official schema of a revision allows
comes back unchanged through trimcp's typed schema for that revision.

Instances are drawn by ``tests/helpers/schema_strategies`` from ``schema.json`` itself and
checked against it with ``jsonschema`` first (the oracle: the generator cannot drift from the
schema); then ``from_wire`` / ``to_wire`` (through the per-revision method tables where the
definition has a method) must give back an equal value, unknown members and ``_meta`` included.
A definition with no trimcp class must be named in ``NOT_MODELLED``; one in neither fails.
"""

from __future__ import annotations

import copy
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings

from tests.helpers import schema_strategies as H
from trimcp._sansio import schema as S
from trimcp._sansio.schema import from_wire, to_wire

EXAMPLES = 5

#: Definitions trimcp has no class for, and why.
NOT_MODELLED: dict[str, str] = {
    "ClientResult": "a union of results; trimcp picks the class by the request's method",
    "ServerResult": "a union of results; trimcp picks the class by the request's method",
}


def _narrow(name: str, instance: Any) -> Any:
    """Rules the spec's prose states and its schema does not, applied to a drawn instance.

    2026-07-28 ``InputRequiredResult``: the schema types ``resultType`` as any string and
    requires neither ``inputRequests`` nor ``requestState``; the text says it is
    ``"input_required"`` (that is what tells it from a complete result) and carries at least
    one of the two, and trimcp's class enforces both.
    """
    if name == "InputRequiredResult":
        instance = {**instance, "resultType": S.ResultType.INPUT_REQUIRED}
        if "inputRequests" not in instance and "requestState" not in instance:
            instance["requestState"] = "s"
    return instance


def _cases() -> list[Any]:
    out = []
    for rev in H.REVISIONS:
        if H.load_schema(rev) is None:
            out.append(pytest.param(rev, None, marks=pytest.mark.skip(f"{rev} schema absent")))
            continue
        out += [pytest.param(rev, name, id=f"{rev}-{name}") for name in H.definition_kinds(rev)]
    return out


def _result_classes(rev: str) -> dict[str, type]:
    classes: dict[str, type] = {cls.__name__: cls for _, cls in S.request_types(rev).values()}
    if rev == S.MODERN_REVISION:
        classes["InputRequiredResult"] = S.InputRequiredResult
        classes.update({cls.__name__: cls for _, cls in S.INPUT_REQUEST_TYPES.values()})
    if rev == "2025-11-25":
        classes["CreateTaskResult"] = S.CreateTaskResult
    for name in ("Result", "EmptyResult", "PaginatedResult", "CacheableResult"):
        classes[name] = getattr(S, name)
    return classes


def _null_any_is_absent(instance: Any) -> Any:
    """``instance`` as trimcp reads it: a member declared as any JSON value that is ``null``
    (2026-07-28 ``structuredContent``) reads as absent (schema/_classes.py says why)."""
    if isinstance(instance, dict) and "structuredContent" in instance and instance["structuredContent"] is None:
        return {k: v for k, v in instance.items() if k != "structuredContent"}
    return instance


def _round_trip(rev: str, name: str, kind: str, instance: Any) -> Any:
    """What trimcp gives back for ``instance``, and the part of it that should equal it."""
    if kind == "result":
        cls = _result_classes(rev).get(name)
        assert cls is not None, f"{rev} {name}: no class (add it to NOT_MODELLED if meant)"
        return to_wire(from_wire(cls, instance)), _null_any_is_absent(instance)
    method = H.method_of(H.definitions(rev)[name])
    assert method is not None
    params = instance.get("params")
    if kind == "request":
        if method not in S.request_types(rev) and rev == S.MODERN_REVISION:
            # 2026-07-28: server-to-client requests travel inside an InputRequiredResult.
            cls = S.INPUT_REQUEST_TYPES[method][0]
            sent = {k: v for k, v in instance.items() if k in ("method", "params")}
            return to_wire(from_wire(cls, sent)), sent
        obj = S.parse_request_params(method, params, revision=rev)
    else:
        obj = S.parse_notification_params(method, params, revision=rev)
    return to_wire(obj), {} if params is None else params


@pytest.mark.parametrize(("rev", "name"), _cases())
def test_schema_instances_round_trip(rev: str, name: str) -> None:
    kind = H.definition_kinds(rev)[name]
    if name in NOT_MODELLED:
        pytest.skip(NOT_MODELLED[name])
    check = H.validator(rev, name)

    @settings(
        max_examples=EXAMPLES,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(H.strategy_for(rev, name).map(lambda instance: _narrow(name, instance)))
    def prop(instance: Any) -> None:
        errors = list(check.iter_errors(instance))
        assert not errors, f"generator drift: {errors[0].message} at {list(errors[0].path)}"
        before = copy.deepcopy(instance)
        back, expected = _round_trip(rev, name, kind, instance)
        assert back == expected
        assert instance == before, "from_wire mutated its input"

    prop()


def test_every_definition_is_modelled_or_listed() -> None:
    seen = 0
    for rev in H.REVISIONS:
        if H.load_schema(rev) is None:
            continue
        for name, kind in H.definition_kinds(rev).items():
            seen += 1
            if name in NOT_MODELLED:
                continue
            if kind == "result":
                assert name in _result_classes(rev), (rev, name)
            else:
                method = H.method_of(H.definitions(rev)[name])
                table = S.request_types(rev) if kind == "request" else S.notification_types(rev)
                known = method in table or (rev == S.MODERN_REVISION and method in S.INPUT_REQUEST_TYPES)
                assert known, (rev, name, method)
    if seen == 0:
        pytest.skip("no schema available")
    # A listed definition that no revision has any more is a stale entry.
    names = {n for rev in H.REVISIONS if H.load_schema(rev) for n in H.definition_kinds(rev)}
    assert set(NOT_MODELLED) <= names


def test_classes_are_attrs() -> None:
    for rev in H.REVISIONS:
        assert all(attrs.has(cls) for cls in _result_classes(rev).values())
