"""Form validation with natural-language dates: ``validate_form_async``.

Theory of operation
-------------------
Spec "Client features / Elicitation", form mode (2025-06-18 onwards): the client checks
the values before it sends them.  ``trimcp._sansio.host.forms.validate_form`` does that
strictly; a person, though, types "next Monday at 3pm" into a ``date-time`` field.
``validate_form_async`` first validates strictly, then hands every ``date``/``date-time``
string that is not ISO 8601 (and does not start like it: a mistyped ISO date keeps its
error rather than be guessed at) to a date parser, writes what it returns back in ISO form
(``YYYY-MM-DD``, or RFC 3339 with the offset of ``tz``) and validates again, so the
answer the server gets is always the strict form.

The parser is ``date_parser(text, now, tz)`` (sync or async) returning a ``datetime``,
a ``date`` or ``None``; by default ``dateparser`` (the optional extra ``trimcp[dates]``)
in a worker thread, relative to ``now`` and preferring future dates (a form asks
about what is coming).  A naive result is read in ``tz``.  The caller's cancellation
cancels the parse: the worker thread is abandoned, its answer discarded.  A sync
``date_parser`` runs in the Trio thread, so a slow one should hand itself to a thread.
"""

from __future__ import annotations

import datetime as dt
import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

import attrs
import trio

from .._sansio.host.forms import FormResult, form_fields, is_iso_date, looks_iso, validate_form

__all__ = ["DateParser", "validate_form_async"]

DateParser: TypeAlias = Callable[
    [str, dt.datetime, dt.tzinfo], "dt.datetime | dt.date | None | Awaitable[dt.datetime | dt.date | None]"
]

_INSTALL_HINT = "install trimcp[dates] (dateparser) to enter dates like 'next Monday at 3pm'"


def _dateparser_parse(text: str, now: dt.datetime, tz: dt.tzinfo) -> dt.datetime | None:
    import dateparser

    # dateparser reads RELATIVE_BASE as naive wall-clock time; give it ``now`` as seen in ``tz``.
    base = now.astimezone(tz).replace(tzinfo=None)
    settings: Any = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "future"}
    return dateparser.parse(text, settings=settings)


def _default_parser() -> DateParser | None:
    try:
        import dateparser  # noqa: F401
    except ImportError:
        return None

    async def parse(text: str, now: dt.datetime, tz: dt.tzinfo) -> dt.datetime | dt.date | None:
        return await trio.to_thread.run_sync(
            functools.partial(_dateparser_parse, text, now, tz), abandon_on_cancel=True
        )

    return parse


def _to_iso(fmt: str, value: dt.datetime | dt.date, tz: dt.tzinfo) -> str:
    if fmt == "date":
        return (value.date() if isinstance(value, dt.datetime) else value).isoformat()
    if not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time(0, 0))
    if value.tzinfo is None:
        value = value.replace(tzinfo=tz)
    return value.isoformat()


async def validate_form_async(
    requested_schema: Any,
    content: Mapping[str, Any] | None,
    *,
    now: dt.datetime | None = None,
    tz: dt.tzinfo | str | None = None,
    date_parser: DateParser | None = None,
) -> FormResult:
    """``validate_form``, with natural-language ``date``/``date-time`` values parsed first.

    ``now`` is the present relative dates count from (default: the clock, in ``tz``);
    ``tz`` a ``tzinfo`` or an IANA name (default: ``now``'s zone, else UTC), the zone of
    a parsed time without one; ``date_parser`` replaces ``dateparser``.  A value the
    parser cannot read keeps its strict error, with a hint to install ``trimcp[dates]``
    when no parser is there.
    """
    from zoneinfo import ZoneInfo  # only for a zone given by name (it loads sysconfig)

    zone: dt.tzinfo = ZoneInfo(tz) if isinstance(tz, str) else tz or (now.tzinfo if now and now.tzinfo else dt.UTC)
    moment = now if now is not None else dt.datetime.now(zone)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    result = validate_form(requested_schema, content, now=moment)
    if result.ok or not isinstance(content, Mapping):
        return result
    fields, _ = form_fields(requested_schema)
    pending = [
        f
        for f in fields
        if f.format in ("date", "date-time")
        and f.name in result.errors
        and isinstance(content.get(f.name), str)
        and not is_iso_date(f.format, content[f.name])
        and not looks_iso(content[f.name])
    ]
    if not pending:
        return result
    parser = date_parser if date_parser is not None else _default_parser()
    if parser is None:
        errors = dict(result.errors)
        for field in pending:
            errors[field.name] += f"; {_INSTALL_HINT}"
        return attrs.evolve(result, errors=errors)
    fixed = dict(content)
    unread: list[Any] = []
    for field in pending:
        text = content[field.name]
        parsed = parser(text, moment, zone)
        if inspect.isawaitable(parsed):
            parsed = await parsed
        if isinstance(parsed, (dt.datetime, dt.date)):
            fixed[field.name] = _to_iso(str(field.format), parsed, zone)
        else:
            unread.append(field)
    again = validate_form(requested_schema, fixed, now=moment)
    errors = dict(again.errors)
    for field in unread:
        what = "date" if field.format == "date" else "date and time"
        errors[field.name] = f"could not read {content[field.name]!r} as a {what}"
    return attrs.evolve(again, errors=errors)
