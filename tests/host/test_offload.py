"""``trimcp._trio.offload``: a costly schema leaves the loop, one at a time, except in virtual time."""

from __future__ import annotations

import threading
from typing import Any

import trio
import trio.lowlevel

from trimcp._sansio.bounded.schemas import BoundedSchema
from trimcp._trio import offload


def _fanout(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"$defs": {"l0": {"type": "object"}}, "$ref": f"#/$defs/l{levels - 1}"}
    for level in range(1, levels):
        schema["$defs"][f"l{level}"] = {"allOf": [{"$ref": f"#/$defs/l{level - 1}"}] * 2}
    return schema


def _recording_threads(monkeypatch: Any) -> list[str]:
    """The names of the threads each bounded validation ran in."""
    seen: list[str] = []
    original = BoundedSchema.validate

    def validate(self: BoundedSchema, *args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread().name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(BoundedSchema, "validate", validate)
    return seen


async def test_past_the_inline_budget_a_validation_runs_again_in_a_thread(monkeypatch: Any) -> None:
    threads = _recording_threads(monkeypatch)
    schema = await offload.read_schema(_fanout(40))
    small = await offload.read_schema({"type": "object"})
    assert (await offload.validate(small, {})).valid
    verdict = await offload.validate(schema, {}, units=50_000)
    assert verdict.exhausted
    main = threading.current_thread().name
    assert threads[0] == threads[1] == main and threads[2] != main


async def test_worker_threads_take_turns(monkeypatch: Any) -> None:
    running = [0]
    most = [0]
    lock = threading.Lock()
    original = BoundedSchema.validate

    def validate(self: BoundedSchema, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is threading.main_thread():
            return original(self, *args, **kwargs)  # the inline lane: one at a time by design
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            return original(self, *args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(BoundedSchema, "validate", validate)
    schema = await offload.read_schema(_fanout(40))
    async with trio.open_nursery() as nursery:
        for _ in range(3):
            nursery.start_soon(lambda: offload.validate(schema, {}, units=30_000))
    assert most[0] == 1


async def test_in_virtual_time_everything_stays_on_the_loop(autojump_clock: Any, monkeypatch: Any) -> None:
    threads = _recording_threads(monkeypatch)
    schema = await offload.read_schema(_fanout(40))
    before = trio.current_time()
    woke: list[float] = []

    async def sleeper() -> None:
        await trio.sleep(30)
        woke.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(sleeper)
        await trio.lowlevel.checkpoint()
        verdict = await offload.validate(schema, {}, units=50_000)
        # No thread, so no moment when every task waited and the clock could jump.
        assert trio.current_time() == before and not woke
    assert verdict.exhausted and set(threads) == {threading.current_thread().name}
