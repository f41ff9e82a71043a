"""Mutations of a recorded transcript, each breaking one rule at one known entry.

Theory of operation
-------------------
Each generator takes a transcript (tests/helpers/replay.py: a list of
``(dir, message)`` entries) and a seeded ``random.Random`` and returns up to
``per_kind`` mutants ``Mutant(kind, entries, index)``: a copy of the
transcript broken at entry ``index`` and nowhere before it.  A client that
replays the mutant must report its first problem at exactly ``index``.
``Mutant.where(j)`` says where the original entry ``j`` ended up (an entry
inserted or moved shifts the ones after it), so what is excused at an original
entry (tests/helpers/replay.py) can be excused at the same message in a mutant.

The rules broken, by kind (spec: basic, lifecycle, schema.json per revision):

- ``drop-required``: a member the schema requires removed from a received result
  or notification;
- ``wrong-type``: such a member given a value of another JSON type;
- ``unknown-id``: an answer's id changed to one the client never sent;
- ``reordered``: an answer moved before the request it answers was sent;
- ``duplicate``: an answer received a second time;
- ``notification-not-allowed``: a notification whose capability the server did not
  declare - inserted, or made so by withdrawing a ``listChanged`` the server had
  declared (the site is then the FIRST recorded list_changed of that kind: every
  later one breaks the same rule, but after it);
- ``undeclared-request``: a request from the server for a client capability the
  client did not declare (or, in the stateless era, any server-to-client request:
  they only travel inside an InputRequiredResult there).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from trimcp._sansio.connection.lifecycle import Role
from trimcp._sansio.revisions import Era, get_revision, has_capability, own_gate, peer_gate

from .replay import Entry, opening

#: Members the schema requires, by method: paths into the result (``"*"``: a list item).
REQUIRED_RESULT: dict[str, tuple[tuple[str, ...], ...]] = {
    "initialize": (("protocolVersion",), ("capabilities",), ("serverInfo",), ("serverInfo", "name")),
    "tools/list": (("tools",), ("tools", "*", "name"), ("tools", "*", "inputSchema")),
    "prompts/list": (("prompts",), ("prompts", "*", "name")),
    "resources/list": (("resources",), ("resources", "*", "uri"), ("resources", "*", "name")),
    "resources/templates/list": (
        ("resourceTemplates",),
        ("resourceTemplates", "*", "uriTemplate"),
        ("resourceTemplates", "*", "name"),
    ),
    "resources/read": (("contents",), ("contents", "*", "uri")),
    "prompts/get": (("messages",), ("messages", "*", "role"), ("messages", "*", "content")),
    "tools/call": (("content",), ("content", "*", "type")),
    "completion/complete": (("completion",), ("completion", "values")),
}
REQUIRED_PARAMS: dict[str, tuple[tuple[str, ...], ...]] = {
    "notifications/progress": (("progressToken",), ("progress",)),
    "notifications/message": (("level",),),
    "notifications/resources/updated": (("uri",),),
}
#: Server notifications a capability gates, with valid params.
GATED_NOTIFICATIONS: dict[str, dict[str, Any] | None] = {
    "notifications/tools/list_changed": None,
    "notifications/prompts/list_changed": None,
    "notifications/resources/list_changed": None,
    "notifications/resources/updated": {"uri": "file:///replay/mutated"},
    "notifications/message": {"level": "info", "data": "mutated"},
}
#: Server-to-client requests a client capability gates, with valid params.
SERVER_REQUESTS: dict[str, dict[str, Any] | None] = {
    "sampling/createMessage": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "mutated"}}],
        "maxTokens": 8,
    },
    "roots/list": None,
    "elicitation/create": {"message": "mutated", "requestedSchema": {"type": "object", "properties": {}}},
}
NEVER_SENT_ID = 987_654_321


@attrs.frozen
class Mutant:
    kind: str
    entries: list[Entry]
    index: int
    what: str
    inserted: int | None = None  # a new entry at this index of ``entries``
    moved: tuple[int, int] | None = None  # (from, to): an original entry moved earlier

    def where(self, original: int) -> int:
        """The index in ``entries`` of the original transcript's entry ``original``."""
        if self.moved is not None:
            src, dst = self.moved
            if original == src:
                return dst
            return original + 1 if dst <= original < src else original
        if self.inserted is not None and original >= self.inserted:
            return original + 1
        return original

    @property
    def expected(self) -> tuple[str, ...]:
        """Words one of the problems at ``index`` must contain: the rule the kind breaks."""
        return EXPECTED[self.kind]


#: What the first problem says, by kind (a schema error, or the Connection's own report).
EXPECTED: dict[str, tuple[str, ...]] = {
    "drop-required": ("schema:", "HandshakeFailed", "InvalidAnswer", "ProtocolIssue"),
    "wrong-type": ("schema:", "HandshakeFailed", "InvalidAnswer", "ProtocolIssue"),
    "unknown-id": ("unknown-response-id",),
    "reordered": ("unknown-response-id",),
    "duplicate": ("unknown-response-id",),
    "notification-not-allowed": ("did not declare",),
    "undeclared-request": ("capability-not-advertised", "method-not-in-revision"),
}


def _requests(entries: list[Entry]) -> dict[Any, tuple[int, str]]:
    """Recorded client request id -> (index of the send, method)."""
    out: dict[Any, tuple[int, str]] = {}
    for i, (d, m) in enumerate(entries):
        if d == "send" and isinstance(m, dict) and "method" in m and "id" in m:
            out[m["id"]] = (i, m["method"])
    return out


def _cancelled(entries: list[Entry]) -> set[Any]:
    return {
        (m.get("params") or {}).get("requestId")
        for d, m in entries
        if d == "send" and isinstance(m, dict) and m.get("method") == "notifications/cancelled"
    }


def _answers(entries: list[Entry]) -> list[tuple[int, str, int]]:
    """(index, method, index of the request) of every received answer to a live request."""
    sent, cancelled = _requests(entries), _cancelled(entries)
    return [
        (i, sent[m["id"]][1], sent[m["id"]][0])
        for i, (d, m) in enumerate(entries)
        if d == "recv"
        and isinstance(m, dict)
        and "method" not in m
        and m.get("id") in sent
        and m["id"] not in cancelled
    ]


def _settled(entries: list[Entry]) -> int:
    """The index after which the session operates (the handshake is over)."""
    first, _ = opening(entries)
    after = 0
    for i, (d, m) in enumerate(entries):
        if not isinstance(m, dict):
            continue
        if d == "recv" and m.get("id") == first["id"] and "method" not in m:
            after = i + 1
        if d == "send" and m.get("method") == "notifications/initialized":
            return i + 1
    return after


def _sites(container: Any, path: tuple[str, ...], rng: random.Random) -> tuple[Any, str | int] | None:
    """The parent and key of ``path`` in ``container`` (``*`` picks a list item), if present."""
    node = container
    for n, key in enumerate(path):
        last = n == len(path) - 1
        if key == "*":
            if not isinstance(node, list) or not node:
                return None
            k: str | int = rng.randrange(len(node))
        else:
            if not isinstance(node, dict) or key not in node:
                return None
            k = key
        if last:
            return node, k
        node = node[k]
    return None


def _wrong(value: Any) -> Any:
    if isinstance(value, str):
        return 12345
    if isinstance(value, (list, dict)):
        return "not-" + type(value).__name__
    return "not-a-number" if isinstance(value, (int, float)) and not isinstance(value, bool) else [value]


def _member_mutants(entries: list[Entry], rng: random.Random, kind: str) -> Iterator[Mutant]:
    sites: list[tuple[int, str, tuple[str, ...]]] = []
    for i, method, _ in _answers(entries):
        result = entries[i][1].get("result")
        if isinstance(result, dict) and result.get("resultType") != "input_required":
            sites += [(i, "result", p) for p in REQUIRED_RESULT.get(method, ())]
    for i, (d, m) in enumerate(entries):
        if d == "recv" and isinstance(m, dict) and "id" not in m and m.get("method") in REQUIRED_PARAMS:
            sites += [(i, "params", p) for p in REQUIRED_PARAMS[m["method"]]]
    rng.shuffle(sites)
    for i, member, path in sites:
        mutated = copy.deepcopy(entries)
        msg = mutated[i][1]
        found = _sites(msg.get(member), path, rng)
        if found is None:
            continue
        parent, key = found
        if kind == "drop-required":
            if isinstance(parent, list):
                continue
            del parent[key]
        else:
            parent[key] = _wrong(parent[key])
        yield Mutant(kind, mutated, i, f"{member}.{'.'.join(path)} of entry {i}")


def drop_required(entries: list[Entry], rng: random.Random) -> Iterator[Mutant]:
    return _member_mutants(entries, rng, "drop-required")


def wrong_type(entries: list[Entry], rng: random.Random) -> Iterator[Mutant]:
    return _member_mutants(entries, rng, "wrong-type")


def unknown_id(entries: list[Entry], rng: random.Random) -> Iterator[Mutant]:
    answers = _answers(entries)
    rng.shuffle(answers)
    for i, method, _ in answers:
        mutated = copy.deepcopy(entries)
        mutated[i] = ("recv", {**mutated[i][1], "id": NEVER_SENT_ID})
        yield Mutant("unknown-id", mutated, i, f"answer to {method} at entry {i} given id {NEVER_SENT_ID}")


def reordered(entries: list[Entry], rng: random.Random) -> Iterator[Mutant]:
    answers = _answers(entries)
    rng.shuffle(answers)
    for i, method, sent_at in answers:
        mutated = list(entries)
        answer = mutated.pop(i)
        mutated.insert(sent_at, answer)
        yield Mutant(
            "reordered", mutated, sent_at, f"answer to {method} moved from {i} before its request", moved=(i, sent_at)
        )


def duplicate(entries: list[Entry], rng: random.Random) -> Iterator[Mutant]:
    answers = _answers(entries)
    rng.shuffle(answers)
    for i, method, _ in answers:
        mutated = list(entries)
        mutated.insert(i + 1, copy.deepcopy(entries[i]))
        yield Mutant("duplicate", mutated, i + 1, f"answer to {method} at entry {i} received twice", inserted=i + 1)


def _positions(entries: list[Entry], rng: random.Random) -> list[int]:
    """Where a message may be inserted once the session operates (shuffled)."""
    places = list(range(_settled(entries), len(entries) + 1))
    rng.shuffle(places)
    return places


def notification_not_allowed(entries: list[Entry], rng: random.Random) -> Iterator[Mutant]:
    _, result = opening(entries)
    caps = result.get("capabilities") or {}
    missing = [m for m in GATED_NOTIFICATIONS if not has_capability(caps, own_gate(m) or ())]
    places = _positions(entries, rng)
    for n, method in enumerate(missing):
        at = places[n % len(places)]
        mutated = list(entries)
        note: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if GATED_NOTIFICATIONS[method] is not None:
            note["params"] = GATED_NOTIFICATIONS[method]
        mutated.insert(at, ("recv", note))
        yield Mutant("notification-not-allowed", mutated, at, f"{method} inserted at {at}", inserted=at)
    # A recorded list_changed made illegal by withdrawing the flag the server declared.
    first, _ = opening(entries)
    opened = next(
        i
        for i, (d, m) in enumerate(entries)
        if d == "recv" and isinstance(m, dict) and m.get("id") == first["id"] and "method" not in m
    )
    seen: set[tuple[str, ...]] = set()
    for i, (d, m) in enumerate(entries):
        gate = own_gate(m.get("method", "")) if d == "recv" and isinstance(m, dict) else None
        if gate is None or gate[-1] != "listChanged" or "id" in m or gate in seen:
            continue
        seen.add(gate)  # withdrawn, the flag makes its first notification the first problem
        mutated = copy.deepcopy(entries)
        node = mutated[opened][1]["result"]["capabilities"]
        for key in gate[:-1]:
            node = node[key]
        if not node.pop("listChanged", False):
            continue
        yield Mutant("notification-not-allowed", mutated, i, f"{m['method']} at {i} after {'.'.join(gate)} withdrawn")


def undeclared_request(entries: list[Entry], rng: random.Random, revision: str) -> Iterator[Mutant]:
    first, _ = opening(entries)
    params = first.get("params") or {}
    stateless = get_revision(revision).era is Era.STATELESS
    caps = (
        (params.get("_meta") or {}).get("io.modelcontextprotocol/clientCapabilities")
        if stateless
        else params.get("capabilities")
    )
    rev = get_revision(revision)
    places = _positions(entries, rng)
    for n, method in enumerate(SERVER_REQUESTS):
        gate = peer_gate(method, rev)
        if not stateless and (method not in rev.requests_from(Role.SERVER) or has_capability(caps, gate or ())):
            continue
        at = places[n % len(places)]
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": f"mutant-{n}", "method": method}
        if SERVER_REQUESTS[method] is not None:
            request["params"] = SERVER_REQUESTS[method]
        mutated = list(entries)
        mutated.insert(at, ("recv", request))
        yield Mutant("undeclared-request", mutated, at, f"{method} inserted at {at}", inserted=at)


KINDS: dict[str, Callable[[list[Entry], random.Random, str], Iterator[Mutant]]] = {
    "drop-required": lambda e, r, _v: drop_required(e, r),
    "wrong-type": lambda e, r, _v: wrong_type(e, r),
    "unknown-id": lambda e, r, _v: unknown_id(e, r),
    "reordered": lambda e, r, _v: reordered(e, r),
    "duplicate": lambda e, r, _v: duplicate(e, r),
    "notification-not-allowed": lambda e, r, _v: notification_not_allowed(e, r),
    "undeclared-request": undeclared_request,
}


def mutants(entries: list[Entry], revision: str, seed: str, per_kind: int = 3) -> list[Mutant]:
    """Up to ``per_kind`` mutants of each kind, chosen by a generator seeded with ``seed``."""
    out: list[Mutant] = []
    for kind, make in KINDS.items():
        rng = random.Random(f"{seed}:{kind}")
        for n, mutant in enumerate(make(entries, rng, revision)):
            if n >= per_kind:
                break
            out.append(mutant)
    return out
