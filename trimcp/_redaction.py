"""Keeping the values of ``${VAR}`` expansions out of text meant for people.

Theory of operation.  ``trimcp.config`` expands ``${VAR}`` in an entry from the
environment and records, per entry, which variables it took and their values
(``expanded``).  A ``Redactor`` built from those records replaces each such value,
wherever it appears in a text, by its reference ``${VAR}``: the reader learns which
variable went there, never what it holds.  The rule (which values count, which
spellings of them are looked for) is the config module's docstring's; this module
only applies it:

- ``redactor(text)`` rewrites one text, ``redactor.value(obj)`` every string inside a
  JSON value, list, tuple, dict (keys too) or attrs instance (a status, a report), so
  a structure is redacted before it is rendered and no escaping (JSON, XML, a shell
  quote) can hide a value from the search;
- ``redactor.log_filter()`` is a ``logging.Filter`` that does the same to each record's
  message, traceback and stack, for a handler of the application's (library code that
  never sees the config logs through it: the driver, the transports);
- a ``${NAME}`` already in the text is left alone, so redacting twice changes nothing.

Each value is also looked for in the spellings text built around it gives it: inside
a JSON string (both with and without ASCII escapes), inside a Python ``repr``, inside
a single-quoted shell word (``shlex.join`` of a command line), percent-encoded (a URL)
and XML-escaped.  It is pure: no I/O, nothing shared between instances.
"""

from __future__ import annotations

import enum
import html
import json
import logging
import re
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote, quote_plus

import attrs

__all__ = ["MIN_REDACTED_LENGTH", "Redactor"]

#: Shorter values are shown as they are: a one-to-three character value (``1``, ``on``,
#: ``dev``) is no secret worth the name, and replacing every ``1`` would garble a message.
MIN_REDACTED_LENGTH: Final = 4
# A reference the redactor (or the file) wrote: kept as it is, so redacting is idempotent.
_REFERENCE = r"\$\{[A-Za-z_][A-Za-z0-9_]*\}"


def _spellings(value: str) -> set[str]:
    """``value`` and the forms it takes inside the texts trimcp builds around it."""
    forms = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        repr(value)[1:-1],
        value.replace("'", "'\"'\"'"),  # inside shlex.quote's '...'
        quote(value, safe=""),
        quote(value),
        quote_plus(value),
        html.escape(value),
        html.escape(value, quote=False),  # XML text
        html.escape(value, quote=False).replace('"', "&quot;"),  # an XML attribute
    }
    return {form for form in forms if len(form) >= MIN_REDACTED_LENGTH}


class Redactor:
    """Replaces every recorded value by its ``${VAR}`` in text meant for people.

    ``expanded`` maps a variable to the value it took (``ServerConfig.expanded``,
    ``McpConfig.expanded``).  Calling the redactor on a text returns the text
    redacted; one with nothing recorded returns every text as it is.
    """

    def __init__(self, expanded: Mapping[str, str] | None = None) -> None:
        references: dict[str, str] = {}
        for variable, value in (expanded or {}).items():
            references.setdefault(value, variable)
        self._build(references)

    def _build(self, references: Mapping[str, str]) -> None:
        #: value -> the variable it came from (the first, when two share a value)
        self._references = {v: k for v, k in references.items() if len(v) >= MIN_REDACTED_LENGTH}
        spelled: dict[str, str] = {}
        for value, variable in self._references.items():
            for form in _spellings(value):
                spelled.setdefault(form, "${" + variable + "}")
        self._replacement = spelled
        # Longest first: a value that contains another is replaced whole.
        forms = sorted(spelled, key=len, reverse=True)
        self._pattern = re.compile("|".join([_REFERENCE, *map(re.escape, forms)])) if forms else None

    @property
    def variables(self) -> frozenset[str]:
        """The variables whose values this redactor hides."""
        return frozenset(self._references.values())

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __repr__(self) -> str:  # never the values
        return f"Redactor(variables={sorted(self.variables)!r})"

    def merge(self, *others: Redactor) -> Redactor:
        """One redactor hiding what this one and ``others`` hide (a variable may have had
        another value when another file was read: both are hidden)."""
        references = dict(self._references)
        for other in others:
            for value, variable in other._references.items():
                references.setdefault(value, variable)
        merged = Redactor()
        merged._build(references)
        return merged

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        replacement = self._replacement
        return self._pattern.sub(lambda m: replacement.get(m.group(), m.group()), text)

    def value(self, obj: Any) -> Any:
        """``obj`` with every string inside it redacted: JSON values, lists, tuples, dicts
        (keys too) and attrs instances are copied; anything else is returned as it is."""
        if self._pattern is None:
            return obj
        if isinstance(obj, str):
            return obj if isinstance(obj, enum.Enum) else self(obj)
        if isinstance(obj, Mapping):
            return {self.value(k): self.value(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.value(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self.value(v) for v in obj)
        if attrs.has(type(obj)):
            fields = attrs.fields(type(obj))
            return attrs.evolve(obj, **{f.alias: self.value(getattr(obj, f.name)) for f in fields if f.init})
        return obj

    def log_filter(self) -> logging.Filter:
        """A filter for a ``logging.Handler`` that redacts each record it passes."""
        return _LogFilter(self)


class _LogFilter(logging.Filter):
    """Redacts a record's message, traceback and stack before a handler formats it."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self.redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.redact:
            return True
        message = record.getMessage()
        redacted = self.redact(message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        if record.exc_info and not record.exc_text:
            # Format the traceback here, once: the handler's formatter uses this text.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True
