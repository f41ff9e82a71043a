"""Argument values for a prompt the harness fetches (``prompts.get``), from what the server says.

A prompt's required arguments need values, and the server is not wrong to refuse values it
never suggested.  So a value comes, in order, from the server's own ``completion/complete``
(its first suggestion, with the arguments chosen so far as context from 2025-06-18 on), else from hints in the
argument's description or name (a boolean, an enum-like list, a numeric range, a number, an
id), else ``"test"``.  ``Arguments.invented`` names the values that did not come from the
server: an error about them is the server's right to refuse, not a defect to judge.
"""

from __future__ import annotations

import re

import attrs

from ..._errors import TrimcpError
from ..._sansio import schema as s
from ..._sansio.revisions import get_revision
from ..._trio.client.client_session import ClientSession

__all__ = ["Arguments", "guess", "prompt_arguments"]

_BOOLEAN = re.compile(r"\btrue\s*(?:/|\bor\b|\|)\s*false\b|\bboolean\b", re.IGNORECASE)
_ONE_OF = re.compile(r"\b(?:one of|either|options?|choices?|values?)\s*[:=]?\s*[\"'`(\[]?([\w.-]+)", re.IGNORECASE)
_RANGE = re.compile(r"(-?\d+)\s*(?:-|–|\.\.|to)\s*(-?\d+)")  # noqa: RUF001 - an en dash between two numbers
_NUMBER = re.compile(r"\b(?:integer|int|number|numeric|count|amount|quantity|positive)\b", re.IGNORECASE)
# "resourceId", "user_id", "ID of the text resource": an identifier, most often a number.
_ID = re.compile(r"(?:[a-z]Id|_id|\bid|\bID)\b")
_NOT_A_VALUE = {"the", "a", "an", "following", "these"}
#: How much of a name or description the hints read.
_READ = 300


@attrs.frozen
class Arguments:
    values: dict[str, str]
    invented: tuple[str, ...]  # names whose value the harness made up

    def describe(self, names: tuple[str, ...] | None = None) -> str:
        return ", ".join(f"{n}={self.values[n]}" for n in (self.invented if names is None else names))


def guess(name: str, description: str | None) -> str:
    """A value the argument's own words suggest; ``"test"`` when they suggest none."""
    # A server's description is a peer's text: read only its start, so that no pattern here
    # (``_RANGE`` backtracks over a long run of digits) costs more than a few thousand steps.
    text = (description or "")[:_READ]
    name = name[:_READ]
    if _BOOLEAN.search(text):
        return "true"
    choice = _ONE_OF.search(text)
    if choice is not None and choice.group(1).lower() not in _NOT_A_VALUE:
        return choice.group(1)
    span = _RANGE.search(text)
    if span is not None:
        return span.group(1)
    if _NUMBER.search(text) or _ID.search(name) or _ID.search(text):
        return "1"
    return "test"


async def prompt_arguments(client: ClientSession, can_complete: bool, prompt: s.Prompt) -> Arguments:
    # completion/complete's context is new in 2025-06-18
    context = get_revision(client.protocol_version).has_member("complete_request", "context")
    values: dict[str, str] = {}
    invented: list[str] = []
    for argument in prompt.arguments or []:
        if not argument.required:
            continue
        value = None
        if can_complete:
            value = await _completed(client, prompt.name, argument.name, values if context else {})
        if value is None:
            value = guess(argument.name, argument.description)
            invented.append(argument.name)
        values[argument.name] = value
    return Arguments(values, tuple(invented))


async def _completed(client: ClientSession, prompt: str, argument: str, chosen: dict[str, str]) -> str | None:
    try:
        done = await client.complete(
            {"type": "ref/prompt", "name": prompt}, argument, "", context_arguments=chosen or None
        )
    except TrimcpError:
        return None
    return done.completion.values[0] if done.completion.values else None
