"""Fuzz targets for the host-side parsers: OAuth documents, URI templates, config, forms, truncation.

Theory of operation
-------------------
Each target is a pure function of one ``bytes`` input, so it runs under atheris
(coverage-guided) and under hypothesis alike.  A target raises only
``AssertionError``, when one of its oracles fails; the errors each module documents
are caught inside, anything else escaping is a finding.

The input is read two ways.  When it is strict JSON (UTF-8, no ``NaN``) it is the
document itself: the seed files in ``fuzz/corpus/<target>/`` are real documents.
Otherwise ``_inputs.Source`` turns the bytes into a document, one decision per byte, from a
per-target vocabulary (the member names and values the module branches on), so
random bytes still reach deep paths and a mutating fuzzer has a smooth landscape.

Targets and the specifications behind their oracles:

* ``oauth_metadata``: RFC 8414 authorization-server metadata and RFC 9728
  protected-resource metadata (``trimcp._sansio.auth.discovery`` and the flow
  functions reading metadata): only ``DiscoveryError`` / ``OAuthError``, and each
  check agrees with a direct reading of the document.
* ``token_response``: RFC 6749 section 5.1/5.2 (``parse_token_response``): ``Tokens``
  only from a 200 with a non-empty Bearer ``access_token``; else ``OAuthError``; no
  token in a ``repr`` or an error message.
* ``uri_template``: RFC 6570 level 1 (``trimcp.server._uritemplate``): a template is
  compiled or refused with ``ValueError``; a URI matches, or not, or is refused with
  ``UnsafeVariable`` exactly when a decoded value is no safe segment (checked here
  independently); what a URI matches expands to a URI that matches again (to the same
  values when there is one variable).
* ``config``: the ``mcpServers`` files (``trimcp.config``): ``ConfigError`` only, and
  every accepted entry well typed.
* ``elicitation``: form-mode elicitation (spec "Client features / Elicitation",
  ``trimcp._sansio.host.forms`` and ``trimcp.host.form_dates.validate_form_async``): never
  raises; accepted content satisfies every field and validates to itself.
* ``truncation``: ``CallToolResult`` fitting (``trimcp._sansio.host.truncation`` and
  ``shrink``): within the cap, JSON in gives JSON out, never raises.
"""

from __future__ import annotations

import atexit
import base64
import datetime as dt
import json
import math
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fuzz._inputs import Source, finished, jsonable, strict_json
from fuzz.targets_auth import TARGETS as AUTH_TARGETS
from trimcp import config as cfg
from trimcp._sansio import schema as s
from trimcp._sansio.bounded.budget import WorkBudget
from trimcp._sansio.bounded.patterns import PeerPattern
from trimcp._sansio.host import forms
from trimcp._sansio.host.shrink import dumps, shrink_json, shrink_text
from trimcp._sansio.host.truncation import estimate_tokens, plan_truncation, truncate_result
from trimcp.host.form_dates import validate_form_async
from trimcp.server._uritemplate import UnsafeVariable, UriTemplate

# ------------------------------------------------------------------ uri_template


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


def _unsafe(value: str) -> bool:
    """The path-safety rule read independently: one segment on POSIX and Windows, no controls."""
    return "/" in value or "\\" in value or value == ".." or any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in value)


def fuzz_uri_template(data: bytes) -> None:
    """A template compiles or is refused with ValueError; matches re-expand to matches."""
    text = data.decode("utf-8", "surrogateescape")
    template, *uris = text.split("\n")
    try:
        compiled = UriTemplate(template)
    except ValueError:
        return
    names = compiled.variables
    assert len(set(names)) == len(names) and len(names) == len(re.findall(r"\{[^{}]*\}", template))
    # Every brace belongs to an expression: none is left once they are taken out.
    assert not re.search(r"[{}]", re.sub(r"\{[^{}]*\}", "", template)), template
    for uri in uris:
        try:
            found = compiled.match(uri)
        except UnsafeVariable as exc:
            assert exc.variable in names and exc.template == template
            continue
        if found is None:
            continue
        assert list(found) == list(names) and all(isinstance(v, str) and v for v in found.values())
        assert not any(_unsafe(v) for v in found.values()), (template, uri, found)
        _reexpand(compiled, found)
    # Values of our own (each line a value, surrogates and all) expand to a matching URI.
    values = [u for u in uris if u] or ["x"]
    _reexpand(compiled, {n: values[i % len(values)] for i, n in enumerate(names)})


def _reexpand(compiled: UriTemplate, values: dict[str, str]) -> None:
    try:
        uri = compiled.expand(**values)
    except UnicodeEncodeError:
        # A lone surrogate has no UTF-8 form, so no URI can carry it (noted, not a crash).
        assert any(_has_surrogate(v) for v in values.values())
        return
    try:
        again = compiled.match(uri)
    except UnsafeVariable:
        # One variable: refused exactly when its value is unsafe.  More: a split of the
        # expansion other than ours can make a '..' of safe values ("a." and ".").
        assert len(compiled.variables) > 1 or any(_unsafe(v) for v in values.values()), (compiled, values)
        return
    assert again is not None, (compiled, values, uri)
    if len(compiled.variables) == 1:
        assert again == values, (compiled, values, uri, again)
        assert not any(_unsafe(v) for v in values.values())


# ------------------------------------------------------------------ config

CONFIG_VOCAB = (
    "mcpServers",
    "servers",
    "command",
    "args",
    "env",
    "cwd",
    "type",
    "stdio",
    "http",
    "streamable-http",
    "sse",
    "ws",
    "url",
    "headers",
    "headersHelper",
    "oauth",
    "clientId",
    "callbackPort",
    "authServerMetadataUrl",
    "shutdown",
    "graceMs",
    "sigintMs",
    "sigtermMs",
    "heartbeat",
    "intervalMs",
    "timeoutMs",
    "disabled",
    "inputs",
    "time",
    "https://x.example/mcp",
    "ws://127.0.0.1:1/",
    "wss://x",
    "HTTP://X",
    "uvx",
    "npx",
    "${PORT}",
    "${NOPE}",
    "${NOPE:-d}",
    "${env:HOME}",
    "${input:key}",
    "${}",
    "${EMPTY:-}",
    "\u00b2",
    "8080",
    "0",
    "-y",
    "",
    "//",
    "/*",
)
_ENV = {"HOME": "/home/fuzz", "PORT": "8080", "TOKEN": "t0k", "EMPTY": "", "BRACE": "x}"}
_SCHEMES = {"http": ("http://", "https://"), "sse": ("http://", "https://"), "ws": ("ws://", "wss://")}
_tmp: list[Path] = []


def _config_file() -> Path:
    if not _tmp:
        path = Path(tempfile.mkdtemp(prefix="trimcp-fuzz-config-"))
        atexit.register(shutil.rmtree, path, ignore_errors=True)
        _tmp.append(path / "mcp.json")
    return _tmp[0]


def fuzz_config(data: bytes) -> None:
    """load_config (the bytes as a file) and parse_config (a built object) raise only ConfigError."""
    path = _config_file()
    path.write_bytes(data)
    try:
        loaded = cfg.load_config(path, environ=_ENV)
    except cfg.ConfigError as exc:
        assert exc.source == str(path) and str(exc).startswith(str(path))
    else:
        _check_config(loaded, None)
    was_json, _ = strict_json(data)
    if not was_json:
        src = Source(data, CONFIG_VOCAB)
        entries = {src.string(): _entry(src) for _ in range(1 + src.byte() % 3)}
        obj: Any = {src.pick(("mcpServers", "servers")): entries} if data[:1] != b"\x00" else src.value()
        try:
            parsed = cfg.parse_config(obj, source="<fuzz>", environ=_ENV)
        except cfg.ConfigError as exc:
            assert exc.source == "<fuzz>"
            return
        _check_config(
            parsed,
            entries
            if (isinstance(obj, dict) and obj.get("mcpServers") is entries)
            or (isinstance(obj, dict) and "mcpServers" not in obj and obj.get("servers") is entries)
            else None,
        )


def _entry(src: Source) -> Any:
    if src.byte() % 8 == 0:
        return src.value()
    entry: dict[str, Any] = {}
    for _ in range(src.byte() % 6):
        key = src.string()
        b = src.byte() % 4
        entry[key] = (
            src.string()
            if b == 0
            else [src.string() for _ in range(src.byte() % 3)]
            if b == 1
            else {src.string(): src.value(3) for _ in range(src.byte() % 3)}
            if b == 2
            else src.value(2)
        )
    return entry


def _check_config(config: cfg.McpConfig, entries: dict[str, Any] | None) -> None:
    assert not set(config.servers) & set(config.errors)
    if entries is not None:
        assert set(config.servers) | set(config.errors) == set(entries)
    assert all(isinstance(w, str) for w in config.warnings)
    for name, error in config.errors.items():
        assert isinstance(error, cfg.ConfigError) and error.server == name
        try:
            config.server(name)
            raise AssertionError("an entry with an error was returned")
        except cfg.ConfigError:
            pass
    for name, server in config.servers.items():
        assert server.name == name and config.server(name) is server
        assert isinstance(server.extra, dict) and isinstance(server.disabled, bool)
        _strings(server.extra.keys())
        if server.heartbeat is not None:
            assert 0 < server.heartbeat.interval < math.inf and 0 < server.heartbeat.timeout < math.inf
        if isinstance(server, cfg.StdioServerConfig):
            assert isinstance(server.command, str) and server.command
            assert isinstance(server.args, tuple)
            _strings(server.args)
            _strings(server.env.keys(), server.env.values())
            assert server.cwd is None or isinstance(server.cwd, str)
            if server.shutdown is not None:
                for wait in (server.shutdown.grace, server.shutdown.sigint_wait, server.shutdown.sigterm_wait):
                    assert 0 <= wait <= 600
            continue
        assert isinstance(server, cfg.RemoteServerConfig) and server.transport in _SCHEMES
        assert isinstance(server.url, str) and server.url.lower().startswith(_SCHEMES[server.transport])
        _strings(server.headers.keys(), server.headers.values())
        assert server.headers_helper is None or isinstance(server.headers_helper, str)
        if server.oauth is not None:
            port = server.oauth.callback_port
            assert port is None or (type(port) is int and 1 <= port <= 65535)
            for text in (server.oauth.client_id, server.oauth.auth_server_metadata_url):
                assert text is None or isinstance(text, str)


def _strings(*groups: Any) -> None:
    for group in groups:
        assert all(isinstance(v, str) for v in group), group


# ------------------------------------------------------------------ elicitation

FORM_VOCAB = (
    "type",
    "object",
    "properties",
    "required",
    "string",
    "number",
    "integer",
    "boolean",
    "array",
    "enum",
    "enumNames",
    "oneOf",
    "anyOf",
    "const",
    "title",
    "items",
    "format",
    "email",
    "uri",
    "date",
    "date-time",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "default",
    "description",
    "name",
    "a",
    "b",
    "yes",
    "off",
    "3",
    " 3 ",
    "2.0",
    "1e3",
    "1e400",
    "x@example.com",
    "https://e.com",
    "2026-12-01",
    "2026-13-01",
    "2026-12-01T18:00:00Z",
    "next monday",
    "^[a-z]+$",
    "(",
    "[",
    "\\d",
    "Red",
    "red",
    "RED",
    "",
    "9" * 5000,
)
_KINDS = ("string", "number", "integer", "boolean", "array", "string", "object", None)
_FIELD_KEYS = (
    "enum",
    "enumNames",
    "oneOf",
    "format",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "default",
    "title",
    "description",
    "items",
)
NOW = dt.datetime(2026, 12, 1, 18, 0, tzinfo=dt.UTC)
_ZONES: tuple[dt.tzinfo, ...] = (
    dt.UTC,
    dt.timezone(dt.timedelta(hours=-3)),
    dt.timezone(dt.timedelta(hours=5, minutes=30, seconds=7)),
)


def _form_value(src: Source, depth: int = 0) -> Any:
    b = src.byte() % 5 if depth < 2 else 3
    if b == 0:
        return [src.string() for _ in range(src.byte() % 4)]
    if b == 1:
        return [{src.pick(("const", "title")): src.string(), "title": src.string()} for _ in range(src.byte() % 3)]
    if b == 2:
        return {src.pick(("enum", "anyOf")): _form_value(src, depth + 1)}
    return src.value(3)


def _form(data: bytes) -> tuple[Any, Any]:
    """``(requestedSchema, content)``: the input's own when it is JSON of that shape, else built."""
    ok, doc = strict_json(data)
    if ok:
        if isinstance(doc, dict) and "requestedSchema" in doc:
            return doc["requestedSchema"], doc.get("content")
        return doc, None
    src = Source(data, FORM_VOCAB)
    if src.byte() % 16 == 0:
        return src.value(), src.value()
    props: dict[str, Any] = {}
    for _ in range(src.byte() % 4):
        field: dict[str, Any] = {"type": src.pick(_KINDS)}
        for _ in range(src.byte() % 5):
            field[src.pick(_FIELD_KEYS)] = _form_value(src)
        props[src.string()] = field if src.byte() % 10 else src.value(2)
    names = list(props) + [src.string()]
    schema = {"type": "object", "properties": props, "required": [n for n in names if src.byte() % 3 == 0]}
    content = {
        n if src.byte() % 6 else src.string(): _form_value(src) if src.byte() % 3 == 0 else src.value(3) for n in names
    }
    return schema, content if src.byte() % 12 else src.value()


def _date_parser(text: str, now: dt.datetime, tz: dt.tzinfo) -> dt.datetime | dt.date | None:
    """A stand-in for dateparser: some text it reads (in several shapes), some it cannot."""
    h = sum(text.encode("utf-8", "surrogatepass")) % 6
    if h == 0:
        return None
    if h == 1:
        return now.date()
    if h == 2:
        return now.replace(tzinfo=None)
    if h == 3:
        return now.astimezone(dt.timezone(dt.timedelta(minutes=-90)))
    if h == 4:
        return dt.datetime(1, 1, 1, 0, 0, 0, 1)
    return now.astimezone(tz)


def fuzz_elicitation(data: bytes) -> None:
    """validate_form (and the async one with a date parser) never raise; what they accept fits."""
    schema, content = _form(data)
    fields, _ = forms.form_fields(schema)
    strict = forms.validate_form(schema, content, now=NOW)
    _check_form(schema, content, fields, strict)
    zone = _ZONES[len(data) % len(_ZONES)]
    lenient = finished(validate_form_async(schema, content, now=NOW, tz=zone, date_parser=_date_parser))
    _check_form(schema, content, fields, lenient)
    if strict.ok:
        assert lenient == strict


def _check_form(schema: Any, content: Any, fields: list[forms.FormField], result: forms.FormResult) -> None:
    by_name = {f.name: f for f in fields}
    properties = schema.get("properties") if isinstance(schema, dict) else None
    names = set(properties) if isinstance(properties, dict) else set()
    assert set(result.content) <= set(by_name), (result.content, by_name)
    assert set(result.errors) <= names | {forms.FORM}, result.errors
    # (A property named "" shares its key with FORM: a known ambiguity, not checked here.)
    assert not set(result.content) & set(result.errors) - {forms.FORM}
    assert all(isinstance(m, str) and m for m in result.errors.values())
    assert all(isinstance(n, str) and n not in by_name for n in result.ignored)
    jsonable(result.content)
    for name, value in result.content.items():
        _fits(by_name[name], value)
        if by_name[name].pattern_problem is not None and isinstance(value, str):
            assert name in result.unchecked, (name, result.unchecked)
    # Validating what came out changes nothing (defaults of failed fields may join).
    again = forms.validate_form(schema, result.content, now=NOW)
    assert {k: again.content[k] for k in result.content} == result.content, (result.content, again.content)
    assert not set(again.errors) & set(result.content) - {forms.FORM}, again.errors
    if result.ok:
        assert again.ok and again.content == result.content, again
    if result.ok and isinstance(content, dict):
        for field in fields:
            if field.required:
                assert field.name in result.content


_SAME_IN_BOTH_DIALECTS = re.compile(r"[A-Za-z0-9 ^$.*+?|\[\]-]*")


def _pattern_holds(pattern: str, value: str) -> bool:
    """Whether ``value`` matches the ECMA-262 ``pattern``.  Python's ``re`` is the independent
    reading for patterns made only of what both dialects read alike (for these, whatever
    ECMA-262 matches Python matches too: its ``.`` and ``$`` are only looser); escapes,
    braces and groups differ (``\\d``, ``\\e``, ``a{,3}``, ``(?P``), and there the bounded
    engine answers, with a budget no form runs out of."""
    if _SAME_IN_BOTH_DIALECTS.fullmatch(pattern):
        try:
            return re.search(pattern, value) is not None
        except re.error:
            pass
    return PeerPattern(pattern).search(value, WorkBudget(1 << 40))


def _fits(field: forms.FormField, value: Any) -> None:
    """An independent reading of the field's constraints: ``value`` is valid for ``field``."""
    kind = field.kind
    if kind == "string":
        assert isinstance(value, str)
        assert field.min_length is None or len(value) >= field.min_length
        assert field.max_length is None or len(value) <= field.max_length
        # A pattern the host cannot run in linear time is not enforced, and says so (unchecked).
        if field.pattern is not None and field.pattern_problem is None:
            assert _pattern_holds(field.pattern, value), (field.pattern, value)
        assert forms.is_iso_date(field.format, value)
        return
    if kind in ("number", "integer"):
        assert isinstance(value, (int, float)) and not isinstance(value, bool)
        assert kind == "number" or isinstance(value, int)
        assert not isinstance(value, float) or math.isfinite(value)
        assert field.minimum is None or value >= field.minimum
        assert field.maximum is None or value <= field.maximum
        return
    if kind == "boolean":
        assert isinstance(value, bool)
        return
    values = [v for v, _ in field.choices]
    if kind == "enum":
        assert value in values
        return
    assert isinstance(value, list) and all(v in values for v in value) and len(set(value)) == len(value)
    assert field.min_items is None or len(value) >= field.min_items
    assert field.max_items is None or len(value) <= field.max_items


# ------------------------------------------------------------------ truncation

TRUNC_VOCAB = (
    "text",
    "image",
    "audio",
    "resource",
    "resource_link",
    "uri",
    "mimeType",
    "data",
    "blob",
    "name",
    "value",
    "rows",
    "id",
    "image/png",
    "a,b,c",
    "| a | b |",
    "|---|---|",
    "\n",
    "{",
    "[",
    "…",
    "\u00e9",
    "\ud83d\ude00",
    "x" * 50,
    "AAAA",
)
_LIMITS = (64, 65, 80, 100, 150, 200, 400, 1000, 25_000)
_MARKER = "chars in all, truncated]"


def _long_text(src: Source) -> str:
    """Text big enough to need cutting: repeated pieces, JSON, a CSV or a Markdown table."""
    shape = src.byte() % 5
    times = 1 + src.byte() * (1 + src.byte() % 8)
    if shape == 0:
        return (src.string() + src.pick(("", "\n", " "))) * times
    if shape == 1:
        return json.dumps([src.value(1) for _ in range(min(times, 400))], ensure_ascii=src.byte() % 2 == 0)
    if shape == 2:
        return json.dumps({f"k{i}": src.value(2) for i in range(min(times, 300))})
    if shape == 3:
        return "a,b,c\n" + "".join(f"{i},{src.string()},x\n" for i in range(min(times, 400)))
    return "| a | b |\n|---|---|\n" + "".join(f"| {i} | {src.string()} |\n" for i in range(min(times, 400)))


def _block(src: Source) -> Any:
    kind = src.byte() % 8
    if kind <= 2:
        return {"type": "text", "text": _long_text(src)}
    if kind == 3:
        size = src.pick((4, 400, 6400, 8000, 40000))
        return {"type": "image", "data": "A" * size, "mimeType": src.pick(("image/png", "image/jpeg"))}
    if kind == 4:
        return {"type": "audio", "data": "B" * src.pick((4, 4000, 30000)), "mimeType": "audio/wav"}
    if kind == 5:
        inner = (
            {"uri": "file:///x", "text": _long_text(src)}
            if src.byte() % 2
            else {"uri": "file:///y", "blob": base64.b64encode(b"z" * (src.byte() * 40)).decode()}
        )
        return {"type": "resource", "resource": inner}
    if kind == 6:
        return {"type": "resource_link", "uri": "file:///z", "name": src.string()}
    return src.value(2)


def _tool_result(data: bytes) -> Any:
    ok, doc = strict_json(data)
    if ok:
        return doc
    src = Source(data, TRUNC_VOCAB)
    wire: dict[str, Any] = {"content": [_block(src) for _ in range(src.byte() % 5)]}
    if src.byte() % 3 == 0:
        wire["structuredContent"] = {"rows": [src.value(2) for _ in range(src.byte() * 4)], "k": _long_text(src)}
    if src.byte() % 4 == 0:
        wire["isError"] = True
    return wire


def _images(wire: dict[str, Any]) -> int:
    """Tokens of the image blocks: the fixed cost an exact counter never sees."""
    cost = 0
    for block in wire["content"]:
        if block.get("type") == "image":
            data = block.get("data")
            cost += min(1600, math.ceil(len(data) / 4)) if isinstance(data, str) else 1600
    return cost


def _tokens_of(wire: dict[str, Any], counter: Callable[[str], int] | None) -> int:
    """What the limit is measured in: the estimate, or the counter plus the images."""
    if counter is None:
        return estimate_tokens(wire)
    return counter(plan_truncation(wire, max_tokens=64).count_input()) + _images(wire)


def _hook(block: Any, max_tokens: int) -> Any:
    return {"type": "image", "data": "C" * max(4, max_tokens * 4 - 8), "mimeType": "image/png"}


_COUNTERS: tuple[Callable[[str], int] | None, ...] = (None, lambda t: math.ceil(len(t) / 4), lambda t: len(t) // 3 + 1)


def fuzz_truncation(data: bytes) -> None:
    """truncate_result stays within its cap and keeps content valid; shrink_* keep JSON valid."""
    wire = _tool_result(data)
    try:
        result = s.from_wire(s.CallToolResult, wire)
    except s.SchemaError:
        return  # not a tool result (the parser's business, fuzzed by the "schema" target)
    n = len(data)
    limit = _LIMITS[n % len(_LIMITS)]
    counter = _COUNTERS[n // 7 % len(_COUNTERS)]
    hook = _hook if n % 2 else None
    as_wire = s.to_wire(result)
    # One form per input (the typed result or its wire dict), picked by the input like the
    # limit and the counter, so a campaign reaches its inputs at twice the rate.
    for given in ((result, as_wire)[n // 21 % 2],):
        out = truncate_result(
            given,
            max_tokens=limit,
            counter=counter,
            image_hook=hook,
            full_output_path="/tmp/full.json" if n % 3 == 0 else None,
        )
        assert type(out) is type(given)
        out_wire = s.to_wire(out) if isinstance(out, s.CallToolResult) else out
        jsonable(out_wire)
        s.from_wire(s.CallToolResult, out_wire)
        if out is not given:
            assert isinstance(out_wire["content"], list) and out_wire["content"][-1]["type"] == "text"
            assert out_wire["content"][-1]["text"].startswith(f"[OUTPUT TRUNCATED - exceeded {limit} token")
        used = _tokens_of(out_wire, counter)
        assert used <= limit, (used, limit, out is given)
    _shrinks(as_wire, limit, n)


def _shrinks(wire: dict[str, Any], limit: int, n: int) -> None:
    texts = [b["text"] for b in wire["content"] if b.get("type") == "text"]
    texts += [
        b["resource"]["text"]
        for b in wire["content"]
        if b.get("type") == "resource" and isinstance(b["resource"].get("text"), str)
    ]
    for text in texts:
        was_json = text.lstrip()[:1] in ("{", "[") and strict_json(text)[0]
        budgets = (3, 16, 64, limit, 4 * limit)
        for budget in (budgets[n % 5], budgets[(n // 5 + 1 + n % 5) % 5]):  # two of them, by the input
            cut = shrink_text(text, budget)
            assert len(cut) <= max(budget, 0), (budget, len(cut))
            if len(text) <= budget:
                assert cut == text
            elif was_json:
                assert strict_json(cut)[0], (text[:80], cut)
    if "structuredContent" in wire:
        for budget in (3, 16, 64, limit * 4):
            value, text = shrink_json(wire["structuredContent"], budget)
            assert len(text) <= budget and text == dumps(value)
            assert strict_json(text)[0]


TARGETS: dict[str, Callable[[bytes], None]] = {
    **AUTH_TARGETS,  # oauth_metadata, token_response (targets_auth.py)
    "uri_template": fuzz_uri_template,
    "config": fuzz_config,
    "elicitation": fuzz_elicitation,
    "truncation": fuzz_truncation,
}
