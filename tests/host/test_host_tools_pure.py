"""The pure host core: names, descriptions, classification, batch plans, truncation."""

from __future__ import annotations

import itertools
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp._sansio.host import (
    NameTable,
    cap_description,
    classify_tool,
    estimate_tokens,
    mcp_tool_name,
    normalize_name,
    plan_batch,
    plan_truncation,
    shrink_json,
    shrink_text,
    snake_case,
    tool_traits,
    truncate_result,
    unique_tool_name,
)
from trimcp._sansio.host.naming import NAME_PATTERN
from trimcp._sansio.host.shrink import bounded_size
from trimcp._sansio.schema import CallToolResult, Tool, ToolAnnotations, from_wire

NOTICE_HEAD = "[OUTPUT TRUNCATED - exceeded {} token limit]"

# ------------------------------------------------------------------ names


def test_normalize_replaces_everything_outside_the_alphabet() -> None:
    assert normalize_name("my.server/v2 é") == "my_server_v2__"
    assert normalize_name("ok_-Name09") == "ok_-Name09"


def test_plain_name_when_unambiguous() -> None:
    assert unique_tool_name("github", "search_code") == "mcp__github__search_code"
    assert unique_tool_name("fs", "read__file") == "mcp__fs__read__file"


def test_uuid_server_is_shortened_with_a_hash_and_keeps_the_tool() -> None:
    server = "3f2b8c1e-9a4d-4e7b-8c2a-1d5e6f7a8b9c"
    name = unique_tool_name(server, "get_file_contents_of_repository")
    assert len("mcp__" + server + "__get_file_contents_of_repository") > 64
    assert NAME_PATTERN.match(name) and len(name) <= 64
    assert "get_file_contents_of_repository" in name
    assert name == unique_tool_name(server, "get_file_contents_of_repository")  # deterministic
    assert name != unique_tool_name(server, "get_file_contents_of_repositor")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("a.b", "t"), ("a_b", "t")),
        (("a__b", "c"), ("a", "b__c")),
        (("a_", "b"), ("a", "_b")),
        (("s", "x" * 80 + "1"), ("s", "x" * 80 + "2")),
    ],
)
def test_pairs_that_would_collide_do_not(a: tuple[str, str], b: tuple[str, str]) -> None:
    assert unique_tool_name(*a) != unique_tool_name(*b)


def test_name_table_maps_back_without_splitting() -> None:
    pairs = [("a__b", "c"), ("a", "b__c"), ("srv", "tool.x"), ("srv", "tool_x")]
    table = NameTable(pairs)
    assert len(table) == 4
    for pair in pairs:
        assert table.resolve(table.name(*pair)) == pair
    with pytest.raises(KeyError):
        table.resolve("mcp__nope__nope")


def test_name_table_reads_well_until_names_collide() -> None:
    table = NameTable([("srv", "admin.users.list"), ("srv", "get.file"), ("srv", "get_file")])
    assert table.name("srv", "admin.users.list") == "mcp__srv__admin_users_list"
    dotted, plain = table.name("srv", "get.file"), table.name("srv", "get_file")
    assert dotted == unique_tool_name("srv", "get.file") and dotted.startswith("mcp__srv__get_file_")
    assert plain == "mcp__srv__get_file"  # already valid and unambiguous: unique_tool_name keeps it
    assert mcp_tool_name("srv", "get.file") == "mcp__srv__get_file"


def test_name_table_replace_and_discard_server() -> None:
    table = NameTable([("a", "x"), ("b", "y")])
    table.replace_server("a", ["z"])
    assert sorted(table.as_mapping().values()) == [("a", "z"), ("b", "y")]
    table.discard_server("b")
    assert list(table.as_mapping().values()) == [("a", "z")]


# a small alphabet makes normalisation and ``__`` collisions common
names = st.text(min_size=0, max_size=80) | st.text(alphabet="a._-é", max_size=6)
pair_lists = st.lists(st.tuples(names, names), max_size=20)


@given(names, names)
def test_names_always_match_the_pattern(server: str, tool: str) -> None:
    assert NAME_PATTERN.match(unique_tool_name(server, tool))
    assert NAME_PATTERN.match(mcp_tool_name(server, tool))


@given(st.tuples(names, names), st.tuples(names, names))
def test_distinct_pairs_get_distinct_names(a: tuple[str, str], b: tuple[str, str]) -> None:
    if a != b:
        assert unique_tool_name(*a) != unique_tool_name(*b)


def look_alikes(server: str, tool: str) -> set[tuple[str, str]]:
    """Pairs whose plain names coincide with ``(server, tool)``'s: the normalised pair,
    and every other split of ``server__tool`` at a ``__``."""
    joined = f"{normalize_name(server)}__{normalize_name(tool)}"
    out = {(server, tool), (normalize_name(server), normalize_name(tool))}
    start = joined.find("__")
    while start != -1:
        out.add((joined[:start], joined[start + 2 :]))
        start = joined.find("__", start + 1)
    return out


@given(names, names)
def test_look_alike_pairs_get_distinct_names(server: str, tool: str) -> None:
    pairs = look_alikes(server, tool)
    assert len({unique_tool_name(*pair) for pair in pairs}) == len(pairs)
    table = NameTable(pairs)
    assert len(table) == len(pairs)


@given(pair_lists, st.randoms(use_true_random=False))
def test_name_table_independent_of_order_and_injective(pairs: list[tuple[str, str]], rnd: object) -> None:
    shuffled = list(pairs)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    one, two = NameTable(pairs), NameTable(shuffled)
    assert one.as_mapping() == two.as_mapping()
    assert len(one) == len(set(pairs))
    for pair in pairs:
        assert NAME_PATTERN.match(one.name(*pair)) and one.resolve(one.name(*pair)) == pair


# ------------------------------------------------------------------ descriptions


def test_description_capped_with_marker() -> None:
    text = "x" * 30_000
    out = cap_description(text)
    assert out is not None and len(out) == 2048 and out.endswith("… [truncated]")
    assert cap_description("short") == "short"
    assert cap_description(None) is None
    assert cap_description("abcdefghij", cap=8, marker="[cut]") == "abc[cut]"
    assert cap_description("abcdefghij", cap=3, marker="[cut]") == "[cu"


@given(st.text(max_size=300), st.integers(0, 200), st.text(max_size=20))
def test_description_never_longer_than_the_cap(text: str, cap: int, marker: str) -> None:
    out = cap_description(text, cap=cap, marker=marker)
    assert out is not None and len(out) <= cap
    if len(text) <= cap:
        assert out == text


# ------------------------------------------------------------------ classification


@pytest.mark.parametrize(
    ("name", "snake"),
    [
        ("getFileContents", "get_file_contents"),
        ("HTTPRequest", "http_request"),
        ("get-library-docs", "get_library_docs"),
        ("list all  issues", "list_all_issues"),
        ("ReadFile", "read_file"),
    ],
)
def test_snake_case(name: str, snake: str) -> None:
    assert snake_case(name) == snake


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("search_code", "search"),
        ("brave_web_search", "search"),
        ("tavily-search", "search"),
        ("grep", "search"),
        ("findFiles", "search"),
        ("read_file", "read"),
        ("list_directory", "read"),
        ("getFileContents", "read"),
        ("git_status", "read"),
        ("fetch", "read"),
        ("directory_tree", "read"),
        ("write_file", "write"),
        ("search_and_replace", "write"),
        ("write_query", "write"),
        ("query", "write"),
        ("git_commit", "write"),
        ("puppeteer_navigate", "write"),
        ("frobnicate", "write"),
    ],
)
def test_classify_by_name(name: str, kind: str) -> None:
    assert classify_tool({"name": name, "inputSchema": {}}) == kind
    assert classify_tool(Tool(name=name, input_schema={})) == kind


def test_annotations_win() -> None:
    ro = ToolAnnotations(read_only_hint=True)
    assert classify_tool(Tool(name="frobnicate", input_schema={}, annotations=ro)) == "read"
    assert classify_tool(Tool(name="search_and_replace", input_schema={}, annotations=ro)) == "read"
    assert classify_tool({"name": "find", "annotations": {"readOnlyHint": True}}) == "search"
    assert classify_tool({"name": "read_file", "annotations": {"readOnlyHint": False}}) == "write"
    assert classify_tool({"name": "get_x", "annotations": {"destructiveHint": True}}) == "write"
    # idempotence and open world do not make a read a write or the reverse
    assert classify_tool({"name": "fetch", "annotations": {"openWorldHint": True}}) == "read"
    traits = tool_traits({"name": "set_x", "annotations": {"idempotentHint": True}})
    assert traits.kind == "write" and traits.retry_safe and not traits.concurrent
    assert traits.source == "name"
    assert tool_traits({"name": "x", "annotations": {"readOnlyHint": "yes"}}).source == "name"


def test_plan_batch_groups_consecutive_reads() -> None:
    kinds = ["read", "search", "write", "write", "read", "read", "write", "read"]
    plan = plan_batch(kinds)  # type: ignore[arg-type]
    assert plan == [[0, 1], [2], [3], [4, 5], [6], [7]]
    assert plan_batch([]) == []


@given(st.lists(st.sampled_from(["search", "read", "write"]), max_size=30))
def test_plan_batch_properties(kinds: list[str]) -> None:
    plan = plan_batch(kinds)  # type: ignore[arg-type]
    assert [i for group in plan for i in group] == list(range(len(kinds)))
    for group in plan:
        if any(kinds[i] == "write" for i in group):
            assert len(group) == 1
    for first, second in itertools.pairwise(plan):  # no two read groups side by side
        assert kinds[first[0]] == "write" or kinds[second[0]] == "write"


# ------------------------------------------------------------------ truncation


class CountingCounter:
    """An exact counter that records its calls (one token per three characters: denser
    than the estimator, as real tokenizers are on JSON)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        return math.ceil(len(text) / 3)


def text_result(text: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": text}]}


def test_estimate_is_chars_over_four_plus_images() -> None:
    result = {
        "content": [{"type": "text", "text": "x" * 401}, {"type": "image", "data": "A" * 10, "mimeType": "image/png"}]
    }
    assert estimate_tokens(result) == 101 + 3  # a 10-character image costs its size
    result["content"][1]["data"] = "A" * 10_000
    assert estimate_tokens(result) == 101 + 1600


def test_under_half_the_limit_never_counts_exactly() -> None:
    counter = CountingCounter()
    result = text_result("x" * (4 * 12_499))
    assert truncate_result(result, counter=counter) is result
    assert counter.calls == 0
    typed = from_wire(CallToolResult, result)
    assert truncate_result(typed, counter=counter) is typed
    assert counter.calls == 0


def test_between_half_and_the_limit_counts_once_and_passes() -> None:
    counter = CountingCounter()
    result = text_result("x" * (4 * 15_000))
    assert truncate_result(result, counter=counter) is result
    assert counter.calls == 1


def test_exact_counter_can_force_a_cut_the_estimate_would_not() -> None:
    counter = CountingCounter()  # 60 000 chars -> 20 000 by it, 15 000 by the estimator
    out = truncate_result(text_result("y" * 60_000), max_tokens=18_000, counter=counter)
    assert counter.calls == 1
    assert out["content"][-1]["text"].startswith(NOTICE_HEAD.format(18000))
    # the budget shrank by the counter's ratio, so the cut text also fits by the counter
    assert CountingCounter()(out["content"][0]["text"]) <= 18_000


def test_the_two_step_api_for_an_async_counter() -> None:
    result = text_result("z" * 200_000)
    plan = plan_truncation(result)
    assert plan.needs_exact_count
    assert plan.count_input() == "z" * 200_000
    out = plan.finish(50_000)
    assert estimate_tokens(out) <= 25_000
    small = plan_truncation(text_result("z"))
    assert not small.needs_exact_count and small.finish() is small.result


def test_notice_text_and_pagination_hint() -> None:
    out = truncate_result(text_result("word " * 40_000), max_tokens=1000)
    notice = out["content"][-1]["text"]
    assert notice.startswith("[OUTPUT TRUNCATED - exceeded 1000 token limit]\n")
    assert "pagination or filtering tools" in notice
    saved = truncate_result(text_result("word " * 40_000), max_tokens=1000, full_output_path="/tmp/out.txt")
    assert "/tmp/out.txt" in saved["content"][-1]["text"]


def test_plain_text_is_cut_at_the_budget_with_a_marker() -> None:
    text = "\n".join(f"line {i}" for i in range(50_000))
    out = truncate_result(text_result(text), max_tokens=2000)
    body = out["content"][0]["text"]
    assert text.startswith(body.rsplit("\n…", 1)[0])
    assert body.endswith("truncated]")
    assert estimate_tokens(out) <= 2000


def test_images_kept_when_they_fit_else_placeholder() -> None:
    image = {"type": "image", "data": "QUJD" * 2000, "mimeType": "image/png"}
    result = {"content": [{"type": "text", "text": "t" * 20_000}, image, image]}
    out = truncate_result(result, max_tokens=3000)
    kinds = [b["type"] for b in out["content"]]
    assert kinds.count("image") == 1  # one fits beside the notice, not two
    placeholder = [b["text"] for b in out["content"] if b["type"] == "text" and "image/png" in b["text"]]
    assert placeholder and "omitted" in placeholder[0]
    assert estimate_tokens(out) <= 3000


def test_image_hook_may_offer_a_smaller_image() -> None:
    seen: list[int] = []

    def hook(block: object, max_tokens: int) -> dict[str, str]:
        seen.append(max_tokens)
        return {"type": "image", "data": "c21hbGw=", "mimeType": "image/jpeg"}

    image = {"type": "image", "data": "QUJD" * 2000, "mimeType": "image/png"}
    out = truncate_result(
        {"content": [image, image, {"type": "text", "text": "t" * 30_000}]}, max_tokens=3000, image_hook=hook
    )
    assert [b["type"] for b in out["content"]][:2] == ["image", "image"]
    assert out["content"][1]["mimeType"] == "image/jpeg"  # the second one, downscaled
    assert len(seen) == 1 and 0 < seen[0] < 1600
    assert estimate_tokens(out) <= 3000


def test_json_text_stays_valid_with_head_tail_and_marker() -> None:
    items = [{"id": i, "name": f"item {i}", "tags": ["a", "b"]} for i in range(5000)]
    out = truncate_result(text_result(json.dumps(items, indent=2)), max_tokens=1000)
    value = json.loads(out["content"][0]["text"])
    assert value[0] == items[0] and value[-1] == items[-1]
    markers = [v for v in value if isinstance(v, str)]
    assert len(markers) == 1 and f"{5000 - (len(value) - 1)} items omitted" in markers[0]
    assert estimate_tokens(out) <= 1000


def test_objects_keep_every_key_and_long_strings_get_a_marker() -> None:
    value = {"summary": "s" * 50_000, "count": 3, "rows": list(range(20_000)), "meta": {"a": 1}}
    shrunk, text = shrink_json(value, 2000)
    assert len(text) <= 2000 and json.loads(text) == shrunk
    assert list(shrunk) == list(value)
    assert shrunk["count"] == 3 and shrunk["meta"] == {"a": 1}
    assert shrunk["summary"].endswith("chars]") and shrunk["summary"].startswith("sss")
    assert shrunk["rows"][0] == 0 and shrunk["rows"][-1] == 19_999


def test_deep_nesting_is_summarised() -> None:
    deep: object = list(range(1000))
    for _ in range(30):
        deep = {"next": deep, "pad": "p" * 50}
    _, text = shrink_json(deep, 3000)
    assert len(text) <= 3000
    assert text.count('"next"') == 8 and '"next":"{object with 2 keys}"' in text  # depth 8, then a summary


def test_structured_content_is_cut_as_json() -> None:
    structured = {"results": [{"id": i, "body": "b" * 30} for i in range(10_000)], "next": "cursor-9"}
    result = {"content": [{"type": "text", "text": json.dumps(structured)}], "structuredContent": structured}
    out = truncate_result(result, max_tokens=2000)
    assert out["structuredContent"]["next"] == "cursor-9"
    json.loads(out["content"][0]["text"])
    assert estimate_tokens(out) <= 2000
    typed = truncate_result(from_wire(CallToolResult, result), max_tokens=2000)
    assert isinstance(typed, CallToolResult) and typed.structured_content == out["structuredContent"]


def test_tables_keep_their_header() -> None:
    csv = "id,name,score\n" + "\n".join(f"{i},n{i},{i * 3}" for i in range(10_000))
    cut = shrink_text(csv, 500)
    lines = cut.split("\n")
    assert lines[0] == "id,name,score" and len(cut) <= 500
    assert all(line.count(",") == 2 for line in lines[1:-1])
    assert lines[-1].endswith("more rows omitted")
    md = "| id | name |\n|---|:---:|\n" + "\n".join(f"| {i} | n{i} |" for i in range(10_000))
    cut = shrink_text(md, 500)
    assert cut.startswith("| id | name |\n|---|:---:|\n| 0 | n0 |") and len(cut) <= 500
    assert "\n\n… " in cut


def test_error_flag_and_meta_survive() -> None:
    result = {"content": [{"type": "text", "text": "e" * 200_000}], "isError": True, "_meta": {"k": 1}}
    out = truncate_result(result)
    assert out["isError"] is True and out["_meta"] == {"k": 1}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=60),
    lambda children: st.lists(children, max_size=12) | st.dictionaries(st.text(max_size=10), children, max_size=8),
    max_leaves=120,
)


@settings(max_examples=200)
@given(json_values, st.integers(3, 600))
def test_shrunk_json_is_valid_within_budget_and_deterministic(value: object, budget: int) -> None:
    shrunk, text = shrink_json(value, budget)
    assert len(text) <= budget
    assert json.loads(text) == shrunk
    assert shrink_json(value, budget)[1] == text
    if len(json.dumps(value, ensure_ascii=False, separators=(",", ":"))) <= budget:
        assert shrunk == value


@settings(max_examples=300)
@given(json_values | st.floats() | st.integers(-(2**70), 2**70) | st.text(), st.integers(0, 400))
def test_bounded_size_is_the_serialised_length_up_to_its_cap(value: object, cap: int) -> None:
    # the scalar fast paths must agree with json.dumps exactly (NaN, big ints, escapes)
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    measured = bounded_size(value, cap)
    assert measured == size if size <= cap else measured > cap


@settings(max_examples=60, deadline=None)
@given(json_values, st.integers(64, 800), st.booleans())
def test_truncated_results_valid_within_budget_deterministic(value: object, limit: int, structured: bool) -> None:
    text = json.dumps(value)
    result: dict[str, object] = {"content": [{"type": "text", "text": text}]}
    if structured:
        result["structuredContent"] = value
    out = truncate_result(result, max_tokens=limit)
    if estimate_tokens(result) <= limit:
        assert out is result
        return
    assert estimate_tokens(out) <= limit
    assert out == truncate_result(result, max_tokens=limit)
    first = out["content"][0]["text"]
    if not first.startswith("[OUTPUT TRUNCATED"):
        json.loads(first)
    if structured:
        json.dumps(out["structuredContent"])


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=3000), st.integers(64, 600))
def test_text_results_within_budget(text: str, limit: int) -> None:
    result = text_result(text)
    out = truncate_result(result, max_tokens=limit)
    if estimate_tokens(result) <= limit:
        assert out is result
    else:
        assert estimate_tokens(out) <= limit and out["content"][-1]["text"].startswith("[OUTPUT")
