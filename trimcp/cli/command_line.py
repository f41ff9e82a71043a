"""Reading a ``trimcp`` command line: options anywhere, and the server target read safely.

Theory of operation
-------------------
A command line names at most one server, in one of two ways:

* a command after ``--`` (``trimcp tools list -- npx -y some-server``), taken verbatim, or
* one URL (``http://``, ``https://``, ``ws://``, ``wss://``) as a positional argument.

With neither, the bundled reference server runs, and ``trimcp`` says so on stderr, so a
forgotten or mistyped target can never pass for a real server in CI.  Any other positional
word left over (``trimcp tools list mcp-server-time``, a second URL, a URL next to ``--``)
is a usage error, found here, before anything is started or connected.

Options are accepted anywhere before ``--``: each subcommand's (or action's: ``tools call``)
parser reads its words with ``parse_intermixed_args``, so ``trimcp tools call echo
--tool-arg message=hi URL`` and ``trimcp tools list URL --format json`` work.  The top-level
and command parsers keep their subparsers (for ``--help`` and their usage errors); only the
dispatch to the subcommand and its action is done here, because argparse cannot intermix a
parser that has subparsers.

A subcommand's own positional slots (the tool ``NAME`` of ``tools call``, the ``URI`` of
``resources read``) take the first words, in order; the words after them are the target.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Protocol

from .. import TrimcpError

URL_SCHEMES = ("http://", "https://", "ws://", "wss://")

#: (command, action) -> the names of the positional slots filled before the target.
SLOTS: Mapping[tuple[str, str], tuple[str, ...]] = {
    ("tools", "call"): ("name",),
    ("resources", "read"): ("uri",),
    ("prompts", "get"): ("name",),
}
#: What each slot is called in an error message.
_SLOT_WORDS = {
    ("tools", "name"): "a tool NAME",
    ("prompts", "name"): "a prompt NAME",
    ("resources", "uri"): "a resource URI",
}
#: The subcommands that talk to a server given by a target.
TARGET_COMMANDS = frozenset({"check", "tools", "resources", "prompts"})


class Parsers(Protocol):
    """The parsers ``parse`` dispatches to (``parser.ParserTree``)."""

    top: argparse.ArgumentParser
    commands: Mapping[str, argparse.ArgumentParser]
    actions: Mapping[str, Mapping[str, argparse.ArgumentParser]]


class UsageError(TrimcpError, ValueError):
    """A mistake on the command line: reported in one line, exit 2, before anything starts."""


def split_argv(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Everything after the first ``--`` is the server command, verbatim."""
    argv = list(argv)
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return argv, []


def is_url(word: str) -> bool:
    return word.startswith(URL_SCHEMES)


def parse(tree: Parsers, argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """``(namespace, trailing command)``; argparse exits 2 (or 0 for ``--help``) on its own errors."""
    own, trailing = split_argv(argv)
    if not own or own[0] not in tree.commands:
        # No subcommand, an unknown one, or a top-level option: the top parser reports it.
        return tree.top.parse_args(own), trailing
    command, rest = own[0], own[1:]
    actions = tree.actions.get(command)
    if actions is None:
        ns = tree.commands[command].parse_intermixed_args(rest)
        ns.command = command
        return ns, trailing
    # tools / resources / prompts: the action is the first word (or, after options, the first
    # word that names one); no action, an unknown one or --help: the command's parser says so.
    at = 0 if rest and rest[0] in actions else next((i for i, w in enumerate(rest) if w in actions), None)
    if at is None or (at > 0 and any(w in ("-h", "--help") for w in rest[:at])):
        return tree.commands[command].parse_args(rest), trailing
    ns = actions[rest[at]].parse_intermixed_args(rest[:at] + rest[at + 1 :])
    ns.command, ns.action = command, rest[at]
    return ns, trailing


def resolve_target(ns: argparse.Namespace, trailing: list[str]) -> list[str] | None:
    """Fill the subcommand's slots from ``ns.words``; the target (a URL or a command) or ``None``.

    ``None`` means no target was given: the caller runs the reference server and says so.
    """
    words = list(getattr(ns, "words", []))
    slots = SLOTS.get((ns.command, getattr(ns, "action", "")), ())
    for slot in slots:
        what = _SLOT_WORDS[(ns.command, slot)]
        if not words:
            raise UsageError(f"{ns.command} {ns.action} needs {what}")
        word = words.pop(0)
        if slot == "name" and is_url(word):
            raise UsageError(f"{ns.command} {ns.action} needs {what} before the server URL, got {word!r}")
        setattr(ns, slot, word)
    urls = [w for w in words if is_url(w)]
    stray = [w for w in words if not is_url(w)]
    if stray:
        example = " ".join(stray)
        raise UsageError(
            f"unexpected argument {stray[0]!r}: a server command goes after -- "
            f"(trimcp {' '.join(filter(None, (ns.command, getattr(ns, 'action', None))))} -- {example}); a server URL starts with http://, "
            "https://, ws:// or wss://"
        )
    if len(urls) > 1:
        raise UsageError(f"more than one server given: {' '.join(urls)}")
    if urls and trailing:
        raise UsageError(f"both a URL ({urls[0]}) and a command after -- were given; pick one")
    if urls:
        return urls
    return trailing or None


__all__ = ["SLOTS", "TARGET_COMMANDS", "Parsers", "UsageError", "is_url", "parse", "resolve_target", "split_argv"]
