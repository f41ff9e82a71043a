"""The revision table (``_sansio/revisions.py``): one row per revision, every per-revision fact
read from it, and no module elsewhere comparing protocol version strings."""

from __future__ import annotations

import ast
import re

import attrs
import pytest
from repo_paths import PACKAGE

from trimcp._sansio import extensions
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio import revisions as rv
from trimcp._sansio.auth import flow
from trimcp._sansio.http.server import policy, routing
from trimcp._sansio.schema import methods
from trimcp.conformance.checks import negative
from trimcp.server import _compat

PACKAGE = PACKAGE
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


# ---------------------------------------------------------------- the table itself


def test_every_known_version_has_its_row_oldest_first() -> None:
    assert rv.ALL_VERSIONS == tuple(sorted(rv.ALL_VERSIONS))
    assert len(rv.ALL_VERSIONS) >= 5
    for name, row in rv.REVISIONS.items():
        assert row.name == name and DATE.fullmatch(name)
        assert rv.get_revision(name) is row
    assert set(rv.HANDSHAKE_VERSIONS) | set(rv.STATELESS_VERSIONS) == set(rv.ALL_VERSIONS)
    with pytest.raises(ValueError, match="unknown MCP protocol revision"):
        rv.get_revision("1999-01-01")


def test_the_rows_say_what_the_spec_says() -> None:
    def where(fact: str) -> tuple[str, ...]:
        return rv.revisions_where(lambda r: getattr(r, fact))

    assert where("batches") == ("2025-03-26",)
    assert where("primes_sse") == ("2025-11-25",)
    assert where("task_augmentation") == ("2025-11-25",)
    assert where("metadata_headers") == ("2026-07-28",)
    assert where("registers_application_type") == ("2026-07-28",)
    assert where("trace_meta_keys") == ("2026-07-28",)
    assert where("protocol_version_header") == ("2025-06-18", "2025-11-25", "2026-07-28")
    assert not rv.REV_2024_11_05.completions_capability
    assert rv.revisions_where(lambda r: r.http_transport is rv.HttpTransport.HTTP_SSE) == ("2024-11-05",)
    assert rv.revisions_where(lambda r: r.session_header) == ("2025-03-26", "2025-06-18", "2025-11-25")
    assert rv.revisions_where(lambda r: r.result_types) == ("2026-07-28",)
    assert rv.REV_2026_07_28.input_required
    # stateless: the server's questions ride in InputRequiredResult, never as JSON-RPC requests
    assert "elicitation/create" in rv.REV_2026_07_28.server_requests
    assert "elicitation/create" not in rv.REV_2026_07_28.wire_requests
    assert "elicitation/create" in rv.REV_2025_06_18.wire_requests
    assert rv.REV_2025_11_25.has_member("tool", "execution")
    assert not rv.REV_2026_07_28.has_member("tool", "execution")
    assert not rv.REV_2024_11_05.has_member("tool", "title") and rv.REV_2024_11_05.has_member("tool", "name")
    assert not rv.REV_2024_11_05.has_content_type("audio") and rv.REV_2025_03_26.has_content_type("audio")
    assert rv.REV_2024_11_05.has_content_type("text")
    assert rpc.URL_ELICITATION_REQUIRED in rv.REV_2025_11_25.error_codes
    assert rpc.RESOURCE_NOT_FOUND_LEGACY not in rv.REV_2026_07_28.error_codes


def test_gated_members_are_those_some_row_lacks() -> None:
    for kind, names in rv.GATED_MEMBERS.items():
        for name in names:
            having = [r.name for r in rv.REVISIONS.values() if name in r.members.get(kind, ())]
            assert having and len(having) < len(rv.REVISIONS), (kind, name)


def test_at_least_reads_the_table_order() -> None:
    assert rv.at_least("2025-11-25", "2025-06-18") and rv.at_least("2025-06-18", "2025-06-18")
    assert not rv.at_least("2024-11-05", "2025-03-26")
    assert rv.revisions_from("2025-11-25") == ("2025-11-25", "2026-07-28")
    with pytest.raises(ValueError):
        rv.at_least("2025-11-25", "2025-13-01")  # a typo is an error, not a string comparison


# ---------------------------------------------------------------- consumers read the row


@pytest.fixture
def flipped(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Replace one row of the table for the test: a consumer that reads the row follows."""

    def flip(name: str, **changes: object) -> None:
        monkeypatch.setitem(rv.REVISIONS, name, attrs.evolve(rv.REVISIONS[name], **changes))  # type: ignore[arg-type]

    return flip


def test_sse_priming_follows_the_row(flipped) -> None:  # type: ignore[no-untyped-def]
    assert policy.primes_streams("2025-11-25") and not policy.primes_streams("2025-06-18")
    assert not policy.primes_streams(None) and not policy.primes_streams("1999-01-01")
    flipped("2025-06-18", primes_sse=True)
    assert policy.primes_streams("2025-06-18")


def test_trimming_follows_the_row(flipped) -> None:  # type: ignore[no-untyped-def]
    tool = {"name": "t", "inputSchema": {}, "title": "T", "outputSchema": {}}
    assert set(_compat.tool(tool, "2025-06-18")) == set(tool)
    flipped("2025-06-18", members={**rv.REV_2025_06_18.members, "tool": frozenset({"title"})})
    assert set(_compat.tool(tool, "2025-06-18")) == {"name", "inputSchema", "title"}
    audio = {"type": "audio", "data": "", "mimeType": "audio/wav"}
    assert _compat.content(audio, "2025-03-26") == audio
    flipped("2025-03-26", content_types=frozenset())
    assert _compat.content(audio, "2025-03-26")["type"] == "text"


def test_schema_rules_follow_the_row(flipped) -> None:  # type: ignore[no-untyped-def]
    task_params = methods.parse_request_params(
        "tools/call", {"name": "t", "arguments": {}, "task": {"ttl": 1}}, "2025-11-25"
    )
    assert methods.result_class("tools/call", task_params, "2025-11-25").__name__ == "CreateTaskResult"
    flipped("2025-11-25", task_augmentation=False)
    assert methods.result_class("tools/call", task_params, "2025-11-25").__name__ == "CallToolResult"


def test_registration_and_error_codes_follow_the_row(flipped) -> None:  # type: ignore[no-untyped-def]
    def body(revision: str) -> dict[str, object]:
        return flow.registration_body(
            client_name="c", redirect_uri="http://127.0.0.1/cb", scope=None, revision=revision, as_metadata={}
        )

    assert "application_type" in body("2026-07-28") and "application_type" not in body("2025-11-25")
    flipped("2025-11-25", registers_application_type=True)
    assert "application_type" in body("2025-11-25")
    assert negative.code_problem(rpc.HEADER_MISMATCH, "2026-07-28") is None
    flipped("2026-07-28", error_codes=frozenset())
    assert negative.code_problem(rpc.HEADER_MISMATCH, "2026-07-28") is not None


def test_tables_built_at_import_come_from_the_rows() -> None:
    for name, row in rv.REVISIONS.items():
        assert set(methods.request_types(name)) == row.wire_requests
        assert set(methods.notification_types(name)) == row.notifications
    assert routing.DEFAULT_HEADERLESS_VERSION == "2025-03-26"
    assert not rv.get_revision(routing.DEFAULT_HEADERLESS_VERSION).protocol_version_header
    assert extensions.UI.revisions == {n for n, r in rv.REVISIONS.items() if r.has_member("tool", "_meta")}
    assert extensions.TASKS.revisions == set(rv.STATELESS_VERSIONS)


# ---------------------------------------------------------------- nobody else compares versions

#: Places outside revisions.py that may compare with a revision name, each with its reason.
ALLOWED: dict[str, str] = {
    # The legacy-authorization checks run for the one revision whose authorization page they
    # test ("2025-03-26 only"): a statement of the spec, as the check's own text says.
    "trimcp/conformance/checks/auth_legacy.py": "checks of the 2025-03-26 authorization page",
    # Only the 2025-06-18 authorization page lacks the well-known fallback: the spec, per page.
    "trimcp/conformance/checks/auth.py": "a rule of the 2025-06-18 authorization page",
    # Not a revision comparison: the text of the HTTP+SSE keeper's last issue is searched.
    "trimcp/_trio/transports/http/connect.py": "searches an error message for the transport's name",
}
#: Modules that may write collections of revision names: the check catalog states, as the
#: spec does, which revisions each rule is written in.
ALLOWED_LISTS: dict[str, str] = {
    "trimcp/conformance/catalog/auth.py": "the revisions each authorization rule is written in",
    "trimcp/conformance/catalog/basic.py": "the revisions each rule is written in",
    "trimcp/conformance/catalog/core.py": "per-revision requirement levels of one check",
}

_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
#: ``protocol_version``, ``tour.revision``, ``TRACE_REVISION`` (not ``SAME_VERSION_PROBES``).
_VERSIONISH = re.compile(r"(version|revision)$", re.IGNORECASE)


def _is_revision(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(DATE.fullmatch(node.value))


def _named_like_a_version(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return bool(_VERSIONISH.search(name))


def comparisons(tree: ast.AST) -> list[tuple[int, str]]:
    """Comparisons of version strings: an ordering (``<``, ``>=``...) of a revision literal or
    of something named like a version, and any comparison with a revision literal."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        if any(isinstance(op, _ORDER) for op in node.ops) and any(
            _is_revision(o) or _named_like_a_version(o) for o in operands
        ):
            found.append((node.lineno, "ordering"))
        elif any(_is_revision(o) for o in operands) or any(
            isinstance(o, (ast.Tuple, ast.Set, ast.List)) and any(_is_revision(e) for e in o.elts) for o in operands
        ):
            found.append((node.lineno, "comparison with a revision literal"))
    return found


def revision_lists(tree: ast.AST) -> list[int]:
    """Collection literals holding revision names, and dicts keyed by them."""
    found: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.Set, ast.List)) and any(_is_revision(e) for e in node.elts):
            found.append(node.lineno)
        elif isinstance(node, ast.Dict) and any(k is not None and _is_revision(k) for k in node.keys):
            found.append(node.lineno)
    return sorted(found)


def _modules() -> list[tuple[str, ast.AST]]:
    return [
        (str(p.relative_to(PACKAGE.parent)), ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.name != "revisions.py" or p.parent.name != "_sansio"
    ]


def test_no_module_compares_protocol_versions() -> None:
    found = [
        f"{where}:{line}: {what}"
        for where, tree in _modules()
        if where not in ALLOWED
        for line, what in comparisons(tree)
    ]
    assert found == []
    # every allow-list entry still earns its place
    trees = dict(_modules())
    assert [w for w in ALLOWED if not comparisons(trees[w])] == []


def test_no_module_lists_revisions() -> None:
    found = [
        f"{where}:{line}" for where, tree in _modules() if where not in ALLOWED_LISTS for line in revision_lists(tree)
    ]
    assert found == []
    trees = dict(_modules())
    assert [w for w in ALLOWED_LISTS if not revision_lists(trees[w])] == []


def test_the_checker_finds_comparisons() -> None:
    bad = ast.parse(
        'a = v >= "2025-06-18"\nb = session.protocol_version < other\nc = r in ("2025-11-25",)\n'
        'd = r == "2025-03-26"\ne = len(x) < 3\nf = name == "2025"\ng = {"2024-11-05": 1}\n'
    )
    assert [line for line, _ in comparisons(bad)] == [1, 2, 3, 4]
    assert revision_lists(bad) == [3, 7]
