"""The server-feature checks of ``trimcp check``: one defect per mode of tests/helpers/bad_features.py.

Each mode of the fake server breaks exactly one rule (an ignored invalid cursor, a
wrong error code, undecodable base64, ...); the CLI run against it must report
that check as failed (or warned, for a SHOULD met with the wrong error code), and
the ``good`` mode must pass every one of them.  Unit tests cover the tool-calling
policy and the invalid arguments ``values.invalid_arguments`` invents.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from repo_paths import REPO

from trimcp._sansio import schema as s
from trimcp.conformance.checks.feature_content import mime_problem, uri_problem
from trimcp.conformance.checks.tool_calls import ToolPolicy
from trimcp.conformance.values import example_arguments, invalid_arguments

REPO = REPO
BAD = str(REPO / "tests" / "helpers" / "bad_features.py")
TIMEOUT = 60

#: mode -> (check, status the report must give it)
DEFECTS = {
    "cursor-ignored": ("pagination.invalid-cursor", "fail"),
    "prompt-unknown-code-0": ("prompts.unknown-name", "warn"),
    "prompt-missing-arg-ok": ("prompts.missing-argument", "fail"),
    "call-without-name-32603": ("tools.call-without-name", "warn"),
    "wrong-types-ok": ("tools.input-validation", "fail"),
    "bad-base64": ("content.base64", "fail"),
    "embedded-no-mime": ("content.embedded-resource", "fail"),
    "logging-below-level": ("logging.below-level", "warn"),  # best practice: advice
    "log-level-ok": ("logging.invalid-level", "fail"),
    "completion-too-many": ("completion.limits", "warn"),  # best practice: advice
    "completion-unknown-ok": ("completion.invalid-ref", "fail"),
    "list-changed-undeclared": ("capabilities.notifications", "fail"),
    "prompts-undeclared": ("features.declared", "fail"),
    "invalid-uri-ok": ("resources.invalid-uri", "fail"),
    "elicit-url-bad-url": ("features.server-requests", "fail"),
    "elicit-complete-unknown": ("features.server-requests", "fail"),
    "sampling-tools-wrong-id": ("features.sampling-tool-balance", "fail"),
    "bad-uri": ("resources.uri-syntax", "fail"),
    "read-both": ("resources.read-contents", "warn"),  # best practice: advice
    "input-schema-invalid": ("tools.input-schema", "fail"),
    "input-schema-null": ("tools.input-schema", "fail"),
    "output-schema-invalid": ("schema.dialect", "fail"),
    "elicit-bad-schema": ("schema.dialect", "fail"),
    "bad-mime": ("content.base64", "fail"),
    "bad-link-uri": ("resources.uri-syntax", "fail"),
}

#: mode -> the other checks of the table that judge the same broken value
JOINT = {"input-schema-invalid": {"schema.dialect"}}


def _check(mode: str, *extra: str) -> tuple[int, dict[str, dict[str, Any]]]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "trimcp.cli",
            "check",
            "--format",
            "json",
            "--revision",
            "2025-11-25",
            *extra,
            "--",
            sys.executable,
            BAD,
            "--mode",
            mode,
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=REPO,
    )
    report = json.loads(proc.stdout)
    return proc.returncode, {c["id"]: c for c in report["checks"]}


def test_good_server_passes_every_feature_check() -> None:
    code, checks = _check("good")
    assert code == 0, {k: v for k, v in checks.items() if v["status"] == "fail"}
    for check_id, _ in DEFECTS.values():
        if check_id in ("features.declared", "features.server-requests", "features.sampling-tool-balance"):
            continue  # nothing undeclared is probed, nothing asked: those checks skip on a good server
        assert checks[check_id]["status"] == "pass", (check_id, checks[check_id])
    assert checks["features.declared"]["status"] == "skip"
    assert checks["tools.call-read-only"]["detail"] == "called 2 tools, 0 returned isError"


@pytest.mark.parametrize("mode", sorted(DEFECTS))
def test_each_defect_is_reported(mode: str) -> None:
    check_id, status = DEFECTS[mode]
    code, checks = _check(mode)
    assert checks[check_id]["status"] == status, checks[check_id]
    if status == "fail" and checks[check_id]["level"] == "MUST":
        assert code == 1
    # Exactly that defect: every other feature check of the table still passes or skips (but
    # the checks reading the same fact: an invalid inputSchema is an invalid schema too).
    others = {cid for cid, _ in DEFECTS.values()} - {check_id} - JOINT.get(mode, set())
    broken = {cid: checks[cid] for cid in others if checks[cid]["status"] in ("fail", "warn")}
    assert broken == {}


def test_call_tools_none_calls_nothing() -> None:
    _, checks = _check("good", "--call-tools", "none")
    assert checks["tools.call-read-only"]["status"] == "skip"
    assert checks["tools.call-read-only"]["detail"] == "--call-tools none: no tool is called"
    assert checks["tools.input-validation"]["status"] == "skip"
    # Nothing was called, so the image tool's content was never seen.
    assert checks["content.base64"]["status"] == "skip"


def _tool(annotations: s.ToolAnnotations | None) -> s.Tool:
    return s.Tool(name="t", input_schema={"type": "object"}, annotations=annotations)


def test_policy_follows_annotations() -> None:
    plain, read_only = _tool(None), _tool(s.ToolAnnotations(read_only_hint=True))
    closed = _tool(s.ToolAnnotations(read_only_hint=True, open_world_hint=False))
    assert [ToolPolicy().allows(t) for t in (plain, read_only, closed)] == [False, True, True]
    # openWorldHint is true when absent (ToolAnnotations), so only the closed-world tool stays.
    assert [ToolPolicy(open_world=False).allows(t) for t in (plain, read_only, closed)] == [False, False, True]
    assert [ToolPolicy("all").allows(t) for t in (plain, read_only, closed)] == [True, True, True]
    assert [ToolPolicy("none").allows(t) for t in (plain, read_only, closed)] == [False, False, False]
    with pytest.raises(ValueError):
        ToolPolicy("some")  # type: ignore[arg-type]


def test_invalid_arguments_break_one_required_type() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
        "required": ["n", "s"],
    }
    assert example_arguments(schema) == {"n": 1, "s": "test"}
    assert invalid_arguments(schema) == {"n": "not a number", "s": "test"}
    # An enum or nothing required leaves nothing certain to contradict.
    assert invalid_arguments({"type": "object", "properties": {"e": {"enum": ["a"]}}, "required": ["e"]}) is None
    assert invalid_arguments({"type": "object"}) is None


def test_a_schema_of_an_unknown_dialect_is_not_judged_but_counted() -> None:
    code, checks = _check("unknown-dialect")
    assert code == 0
    dialect = checks["schema.dialect"]
    assert dialect["status"] == "pass" and "1 not judged: unknown dialect" in dialect["detail"], dialect
    assert dialect["detail"].startswith("1 schemas valid"), dialect  # (the image tool's only)


@pytest.mark.parametrize(
    "uri",
    [
        "mem://one",
        "file:///tmp/a%20b",
        "https://[::1]:8080/x?q=1#f",
        "urn:isbn:0451450523",
        "a:",
        "test://static/resource/1",
        "file:///C:/data",
        "s3://bucket/key?versionId=3",
        "x-y.z+w:opaque/path",
        "ldap://[2001:db8::7]/c=GB?objectClass?one",
        "http://127.0.0.1:80",
        "mailto:a@b.example",
    ],
)
def test_rfc3986_uris_pass(uri: str) -> None:
    assert uri_problem(uri) is None


@pytest.mark.parametrize(
    "uri",
    [
        "mem://one two",
        "a:b#c#d",
        "x:%zz",
        "1a:b",
        "http://[1:2]/",
        "http://h/[x]",
        "custom://host:port",
        "file://C:\\data",
        "no-scheme/path",
        "",
        "caf\u00e9:x",
        "http://h/\n",
    ],
)
def test_what_rfc3986_refuses_fails(uri: str) -> None:
    assert uri_problem(uri) is not None


@pytest.mark.parametrize(
    ("mime", "valid"),
    [
        ("image/png", True),
        ("audio/wav", True),
        ("image/svg+xml; charset=utf-8", True),
        ('audio/ogg; codecs="opus"', True),
        ("application/vnd.ms-excel", True),
        ("png", False),
        ("image/", False),
        ("/png", False),
        ("*/*", False),
        ("image/png extra", False),
        ("", False),
        (None, False),
        ("image png", False),
    ],
)
def test_mime_types_follow_rfc6838(mime: str | None, valid: bool) -> None:
    assert (mime_problem(mime) is None) is valid
