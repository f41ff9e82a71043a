"""Judging the JSON Schemas the server sent, and the structured results they govern.

Theory of operation
-------------------
Spec: ``basic/index`` (JSON Schema usage: "Schemas MUST be valid according to
their declared or default dialect"; the default is 2020-12), ``server/tools``
(``inputSchema`` "MUST be a valid JSON Schema object (not ``null``)"; with an
``outputSchema``, "Servers MUST provide structured results that conform to
this schema").

Nothing here sends anything: ``judge_schemas`` reads the recorded conversation
once the tours are over, so every page of every ``tools/list`` answer and
every ``tools/call`` answer is judged, whoever asked for it.  The tools are
read as the server listed them, not as the typed client kept them (it leaves
out a tool it rejects, e.g. one whose ``inputSchema`` is ``null``).

* ``schema.dialect``: every ``inputSchema``, ``outputSchema`` and elicitation
  ``requestedSchema`` (a server request, or an ``inputRequests`` entry) is
  checked against the metaschema of the dialect its ``$schema`` names, 2020-12
  when it names none.  A ``$schema`` jsonschema does not know leaves that
  schema unjudged (counted in the detail); one that is not a string is wrong
  in every dialect that has the keyword.
* ``tools.input-schema`` (and ``-legacy``, which has no dialect sentence
  behind it: the shape only): an object, not ``null``, of ``type`` object,
  and (2025-11-25 on) valid in its dialect.
* ``tools.structured-output``: every successful (not ``isError``, not an
  interim ``input_required``, not a task) answer to ``tools/call`` of a listed
  tool with an ``outputSchema`` carries ``structuredContent`` that validates.

Schemas are the peer's data: each is read once (identical texts share the
reading) through ``trimcp._trio.offload`` and ``trimcp._sansio.bounded``, at a
bounded cost per schema, and at most ``MAX_SCHEMAS`` distinct ones a run; what
was too costly to read or over the cap is named in the detail, never passed.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Final

import attrs

from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..._trio import offload
from ..evidence import received, sent
from ..results import Tour
from .server_requests import requests_in

DIALECT = "schema.dialect"
INPUT, INPUT_LEGACY, OUTPUT = "tools.input-schema", "tools.input-schema-legacy", "tools.structured-output"
#: Distinct schemas read in one run (each costs at most ``schemas.READ_UNITS``).
MAX_SCHEMAS: Final = 200


@attrs.define
class _Reading:
    """What one schema text came to: ``invalid`` (the server's mistake), or unjudged with ``why``."""

    validator: Any = None
    invalid: str | None = None
    why: str | None = None


@attrs.define
class _Readings:
    cache: dict[str, _Reading] = attrs.field(factory=dict)
    capped: int = 0

    async def read(self, schema: Any) -> _Reading:
        try:
            key = json.dumps(schema, sort_keys=True)
        except (TypeError, ValueError, RecursionError):
            return _Reading(why="not serialisable")
        found = self.cache.get(key)
        if found is not None:
            return found
        if len(self.cache) >= MAX_SCHEMAS:
            self.capped += 1
            return _Reading(why=f"over the cap of {MAX_SCHEMAS} distinct schemas")
        found = self.cache[key] = await _read(schema)
        return found


async def _read(schema: Any) -> _Reading:
    if isinstance(schema, dict) and "$schema" in schema:
        declared = schema["$schema"]
        if not isinstance(declared, str):
            return _Reading(invalid=f"$schema is {json.dumps(declared)[:60]}, not a URI naming a dialect")
        import jsonschema.validators

        if jsonschema.validators.validator_for(schema, default=None) is None:  # type: ignore[arg-type]
            return _Reading(why=f"unknown dialect {declared[:80]!r}")
    reading = await offload.read_schema(schema)
    if reading.invalid:
        return _Reading(invalid=reading.problem)
    if reading.problem is not None:
        return _Reading(why=reading.problem)
    return _Reading(validator=reading)


def _listed_tools(tour: Tour) -> list[tuple[rpc.Response, dict[str, Any]]]:
    recording = tour.recording
    return [
        (answer, tool)
        for request_id, (_, answer) in recording.answers().items()
        if recording.sent_methods.get(request_id) == "tools/list" and isinstance(answer, rpc.Response)
        for tool in answer.result.get("tools") or ()
        if isinstance(tool, dict)
    ]


def _shape_problem(schema: Any) -> str | None:
    if schema is None:
        return "inputSchema is null or absent"
    if not isinstance(schema, dict):
        return f"inputSchema is a {type(schema).__name__}, not an object"
    if schema.get("type") != "object":
        return f'inputSchema type is {json.dumps(schema.get("type"))[:40]}, not "object"'
    return None


async def judge_schemas(tour: Tour) -> None:
    rec = tour.rec
    readings = _Readings()
    judged: Counter[str] = Counter()
    unjudged: Counter[str] = Counter()
    tools = _listed_tools(tour)
    input_problems = legacy_problems = unread_inputs = 0
    output_schemas: dict[str, Any] = {}
    found: list[tuple[str, Any, rpc.Message]] = []
    for answer, tool in tools:
        name = str(tool.get("name"))
        schema = tool.get("inputSchema")
        shape = _shape_problem(schema)
        if shape is not None:
            legacy_problems += 1
            rec.fail(INPUT_LEGACY, f"{name[:60]}: {shape}", [received(answer)])
        if schema is not None:
            found.append((f"{name[:60]}.inputSchema", schema, answer))
        meta = None if schema is None else await readings.read(schema)
        unread_inputs += meta is not None and meta.why is not None
        problem = shape or (meta.invalid if meta is not None else None)
        if problem is not None:
            input_problems += 1
            rec.fail(INPUT, f"{name[:60]}: {problem}", [received(answer)])
        if tool.get("outputSchema") is not None:
            output_schemas[name] = tool["outputSchema"]
            found.append((f"{name[:60]}.outputSchema", tool["outputSchema"], answer))
    for _, msg in tour.recording.messages():
        for method, params in requests_in(msg):
            if method == "elicitation/create" and "requestedSchema" in params:
                found.append(("elicitation requestedSchema", params["requestedSchema"], msg))
    if tools:
        note = f" ({unread_inputs} not judged in their dialect: see {DIALECT})" if unread_inputs else ""
        if not input_problems:
            rec.ok(INPUT, f"{len(tools)} inputSchemas: objects of type object, valid in their dialect{note}")
        if not legacy_problems:
            rec.ok(INPUT_LEGACY, f"{len(tools)} inputSchemas of type object")
    else:
        for check in (INPUT, INPUT_LEGACY):
            rec.skip(check, "the server lists no tools")
    for where, schema, msg in found:
        reading = await readings.read(schema)
        kind = where.rsplit(".", 1)[-1] if "." in where else "requestedSchema"
        if reading.invalid is not None:
            judged[kind] += 1
            rec.fail(DIALECT, f"{where}: {reading.invalid}", [received(msg)])
        elif reading.why is not None:
            unjudged[reading.why] += 1
        else:
            judged[kind] += 1
    _dialect_verdict(tour, judged, unjudged)
    await _structured(tour, output_schemas, readings)


def _dialect_verdict(tour: Tour, judged: Counter[str], unjudged: Counter[str]) -> None:
    rec = tour.rec
    skipped = "; ".join(f"{n} not judged: {why}" for why, n in unjudged.most_common(3))
    if not judged:
        rec.skip(DIALECT, skipped or "the server sent no JSON Schema (no tool, no elicitation)")
        return
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(judged.items()))
    rec.ok(
        DIALECT,
        f"{sum(judged.values())} schemas valid in their dialect ({counts})" + (f"; {skipped}" if skipped else ""),
    )


async def _structured(tour: Tour, output_schemas: dict[str, Any], readings: _Readings) -> None:
    rec, recording = tour.rec, tour.recording
    if not output_schemas:
        rec.skip(OUTPUT, "no listed tool declares an outputSchema")
        return
    judged, skipped = 0, Counter[str]()
    for request_id, (_, answer) in recording.answers().items():
        request = recording.requests.get(request_id)
        if request is None or request.method != "tools/call" or not isinstance(answer, rpc.Response):
            continue
        params = request.params or {}
        name = params.get("name")
        if not isinstance(name, str) or name not in output_schemas or "task" in params:
            continue
        result = answer.result
        if result.get("isError") is True or result.get("resultType") not in (None, s.ResultType.COMPLETE):
            continue
        evidence = [sent(request), received(answer)]
        call = f"{name} {str(params.get('arguments'))[:200]}"
        judged += 1
        content = result.get("structuredContent")
        if content is None:
            rec.fail(OUTPUT, f"{call}: no structuredContent although an outputSchema is declared", evidence)
            continue
        reading = await readings.read(output_schemas[name])
        if reading.invalid is not None:
            rec.fail(OUTPUT, f"{name}: outputSchema is not a valid JSON Schema: {reading.invalid}", evidence)
            continue
        if reading.validator is None:
            judged -= 1
            skipped[f"{name}: outputSchema not checked: {reading.why}"] += 1
            continue
        verdict = await offload.validate(reading.validator, content)
        error = verdict.best()
        if error is not None:
            rec.fail(OUTPUT, f"{call}: structuredContent does not match outputSchema: {error.message}", evidence)
        elif verdict.exhausted:
            judged -= 1
            skipped[f"{name}: structuredContent too costly to check (over {offload.THREAD_UNITS} work units)"] += 1
        elif verdict.unchecked:
            skipped[f"{name}: not enforced: {'; '.join(verdict.unchecked)}"] += 1
    notes = "; ".join(why for why, _ in skipped.most_common(3))
    if judged:
        rec.ok(
            OUTPUT,
            f"{judged} successful calls of tools with an outputSchema conform" + (f" ({notes})" if notes else ""),
        )
    else:
        rec.skip(OUTPUT, notes or "no successful call of a tool with an outputSchema")
