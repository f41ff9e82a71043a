"""Matching URIs against RFC 6570 level-1 templates (MCP resource templates).

Theory of operation
-------------------
A resource template such as ``test://template/{id}/data`` names a family of
resources (spec "Server features / Resources", *Resource Templates*);
``resources/read`` gets a concrete URI from the client and the server must find
the template that produced it and recover the variables.  Level 1 of RFC 6570
has only simple string expansion, ``{var}`` (section 3.2.2): the value is
percent-encoded except for unreserved characters, so an expanded value never
contains ``/``, ``?`` or ``#``.  Operators of higher levels (``{+var}``,
``{?q}``, ...) are refused at registration time rather than silently
mismatched; in particular there is no reserved expansion, so no variable can
span path segments.

Each template compiles into an anchored regular expression with one group per
variable matching ``[^/?#]+?`` (a little more lenient than the RFC: a client
that forgot to encode ``:`` still matches).  The URI is the client's, so the
expression runs on RE2 (``google-re2``), whose time is linear in the URI:
Python's backtracking ``re`` takes time to the power of the number of
variables sharing a path segment (``{a}{b}{c}{d}`` against 800 characters
that do not match: minutes).  Without RE2 installed, ``re`` is used and a
template with two variables in one segment is refused at registration.

The client's URI is untrusted in a second way: percent-decoding is where a
path traversal hides (``..%2F..%2Fetc%2Fpasswd``).  A handler receives a value
as a file name, a key or a row id, so after decoding a variable must be one
safe segment on every system: no ``/`` and no ``\\`` (a separator on
Windows), not ``..``, no NUL or other control character (Unicode category
Cc).  A URI that fits a template but decodes to anything else raises
``UnsafeVariable``; the server answers -32602 before any handler runs.  A
handler that decodes a value *again* (``%252F``) undoes this and is on its own.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Final
from urllib.parse import quote, unquote

from .._errors import TrimcpError

__all__ = ["UnsafeVariable", "UriTemplate", "unsafe_reason"]

_EXPRESSION: Final = re.compile(r"\{([^{}]*)\}")
_VARNAME: Final = re.compile(r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*")


def _load_re2() -> Any:
    try:
        import re2
    except ImportError:  # pragma: no cover - google-re2 is a dependency; see the docstring
        return None
    return re2


_RE2: Final = _load_re2()


class UnsafeVariable(TrimcpError, ValueError):
    """A URI that fits a template but whose decoded variable is not one safe segment."""

    def __init__(self, template: str, variable: str, reason: str) -> None:
        super().__init__(f"variable {variable!r} of resource template {template!r} {reason}")
        self.template = template
        self.variable = variable
        self.reason = reason


def unsafe_reason(value: str) -> str | None:
    """Why a decoded variable value is not a safe single segment, or ``None`` if it is."""
    if "/" in value or "\\" in value:
        return "decodes to a path (contains '/' or '\\')"
    if value == "..":
        return "decodes to '..'"
    if any(unicodedata.category(c) == "Cc" for c in value):
        return "decodes to a control character"
    return None


def _literal(template: str, text: str) -> str:
    # A brace outside an expression is no literal RFC 6570 allows (section 2.1):
    # "a}{x}" or "{{x}" is a typo, not a template.
    if "{" in text or "}" in text:
        raise ValueError(f"URI template {template!r} has an unbalanced brace")
    return re.escape(text)


class UriTemplate:
    """A compiled level-1 URI template."""

    def __init__(self, template: str) -> None:
        self.template = template
        pattern: list[str] = []
        names: list[str] = []
        pos = 0
        crowded = False  # two variables with no '/', '?' or '#' between them
        for m in _EXPRESSION.finditer(template):
            name = m.group(1)
            if not _VARNAME.fullmatch(name):
                raise ValueError(
                    f"URI template {template!r}: only level-1 expressions like {{name}} are supported, not {{{name}}}"
                )
            if name in names:
                raise ValueError(f"URI template {template!r}: variable {name!r} appears twice")
            between = template[pos : m.start()]
            crowded = crowded or (bool(names) and not re.search(r"[/?#]", between))
            names.append(name)
            pattern.append(_literal(template, between))
            pattern.append(f"(?P<v{len(names) - 1}>[^/?#]+?)")
            pos = m.end()
        pattern.append(_literal(template, template[pos:]))
        self.variables: tuple[str, ...] = tuple(names)
        source = "".join(pattern)
        if _RE2 is not None:
            self._regex: Any = _RE2.compile(source)
        elif crowded:  # pragma: no cover - only without google-re2
            raise ValueError(
                f"URI template {template!r}: two variables in one path segment need a "
                "linear-time matcher (pip install google-re2)"
            )
        else:  # pragma: no cover - only without google-re2
            self._regex = re.compile(source)

    def match(self, uri: str) -> dict[str, str] | None:
        """The decoded variables if ``uri`` is an expansion of this template, else ``None``.

        Raises ``UnsafeVariable`` when ``uri`` fits but a value decodes to a path, ``..``
        or a control character (see the module docstring).
        """
        try:
            m = self._regex.fullmatch(uri)
        except UnicodeEncodeError:
            return None  # a lone surrogate: no URI carries one, so no expansion does
        if m is None:
            return None
        values = {name: unquote(m.group(f"v{i}")) for i, name in enumerate(self.variables)}
        for name, value in values.items():
            reason = unsafe_reason(value)
            if reason is not None:
                raise UnsafeVariable(self.template, name, reason)
        return values

    def expand(self, **values: str) -> str:
        """The URI for ``values`` (level-1 expansion: reserved characters percent-encoded)."""
        return _EXPRESSION.sub(lambda m: quote(values[m.group(1)], safe="-._~"), self.template)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"
