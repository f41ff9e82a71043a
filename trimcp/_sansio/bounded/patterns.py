"""Regular expressions from a peer, run in linear time or not at all.

Theory of operation
-------------------
JSON Schema's ``pattern`` and ``patternProperties`` (draft 2020-12, section 6.4 of the
core: "SHOULD be valid according to the ECMA-262 regular expression dialect") and the
``pattern`` of an elicitation form field (spec "Client features / Elicitation",
``StringSchema``) are written by the peer.  Python's ``re`` backtracks: ``(a+)+$``
against thirty ``a`` and a ``!`` takes about a minute, doubling with each ``a``, and
nothing can interrupt it.  So a peer's pattern never reaches ``re``.  It is translated
from ECMA-262 to RE2 syntax and run by RE2 (``google-re2``), whose matching time is
linear in the input.  Linear is not free: RE2's fallback engine costs up to about 10 ns
per input byte per instruction of the compiled program, and a 16-character pattern
such as ``(\\p{L}|a){200}`` compiles to 240 000 instructions.  Hence three bounds:

* a pattern longer than ``MAX_PATTERN_LENGTH`` characters is not compiled;
* RE2 compiles it within ``RE2_MAX_MEM`` bytes (program and DFA cache), which refuses
  programs of more than about ten thousand instructions in a few milliseconds;
* every match is charged to the caller's ``WorkBudget`` before it runs:
  ``len(text) * program size / MATCH_UNIT_DIVISOR`` units, about a microsecond each.

A pattern that cannot be run this way is *not enforced*: ``PeerPattern.problem`` says
why (too long, too large, a feature RE2 lacks: lookaround, backreferences), and the
caller reports the constraint as unchecked rather than guessing.  Only a pattern that
is broken in ECMA-262 too (an unterminated class or group, a quantifier with nothing
to repeat, and Python's parser agreeing) counts as ``invalid``: a broken schema, as
opposed to one using a feature we do not run.

The translation (``to_re2``) covers what differs between the two dialects: ``\\uXXXX``
and ``\\u{...}`` escapes (surrogate pairs joined), ``\\cX``, ``\\0``, ``.`` (which in
ECMA-262 excludes the four line terminators), ``\\s`` (ECMA-262's includes the Unicode
spaces), ``(?<name>`` groups, ``[]`` and ``[^]``, ``[`` and ``\\b`` inside a class, and
identity escapes of letters (``\\a`` is ``a``).  Two approximations remain: ``\\S``
inside a class is RE2's (ASCII) one, and ``\\w``/``\\d``/``\\b`` are ASCII in both.
Without ``google-re2`` installed, no peer pattern is enforced (the reason says so).
"""

from __future__ import annotations

import functools
import re
import warnings
from typing import Any, Final

from ..._errors import TrimcpError
from .budget import WorkBudget

__all__ = [
    "MATCH_UNIT_DIVISOR",
    "MAX_PATTERN_LENGTH",
    "RE2_MAX_MEM",
    "PeerPattern",
    "Unsupported",
    "peer_pattern",
    "to_re2",
]

MAX_PATTERN_LENGTH: Final = 4096
RE2_MAX_MEM: Final = 256 * 1024
#: Byte-instructions per work unit: the fallback engine's worst case, measured at about
#: 10 ns per byte per instruction, makes a unit about a microsecond.
MATCH_UNIT_DIVISOR: Final = 100

# ECMA-262 WhiteSpace and LineTerminator (sections 12.2 and 12.3), the set \s matches.
_SPACE_CLASS: Final = (
    r"\t\n\x0b\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}"
    r"\x{202f}\x{205f}\x{3000}\x{feff}"
)
_DOT: Final = r"[^\n\r\x{2028}\x{2029}]"
_HEX: Final = frozenset("0123456789abcdefABCDEF")
# Escapes that mean the same in both dialects, outside a class and inside one.
_SHARED_ESCAPES: Final = frozenset("dDwWtnrfv")
_ASSERTIONS: Final = frozenset("bB")
_LOOKAROUND: Final = ("(?=", "(?!", "(?<=", "(?<!")


class Unsupported(TrimcpError):
    """The pattern uses something RE2 cannot run in linear time (or at all); ``syntax``
    when it is no ECMA-262 pattern either (an unterminated class, a trailing backslash)."""

    def __init__(self, reason: str, *, syntax: bool = False) -> None:
        super().__init__(reason)
        self.syntax = syntax


# RE2's messages for patterns that are no regular expression in ECMA-262 either; its
# other refusals (a class it does not know, a repetition over 1000) are its limits.
_SYNTAX_ERRORS: Final = (
    "missing )",
    "unexpected )",
    "missing ]",
    "bad repetition operator",
    "no argument for repetition operator",
    "trailing \\",
)


def _hex_run(pattern: str, start: int, count: int) -> int | None:
    digits = pattern[start : start + count]
    if len(digits) == count and all(c in _HEX for c in digits):
        return int(digits, 16)
    return None


def _code_point(code: int) -> str:
    if 0xD800 <= code <= 0xDFFF:
        raise Unsupported("a lone surrogate escape")
    return f"\\x{{{code:x}}}"


def _unicode_escape(pattern: str, i: int) -> tuple[str, int]:
    """``\\u`` at ``i`` (the backslash): the RE2 text and the index after the escape."""
    if pattern.startswith("\\u{", i):
        end = pattern.find("}", i + 3)
        digits = pattern[i + 3 : end] if end > 0 else ""
        if not digits or len(digits) > 6 or not all(c in _HEX for c in digits) or int(digits, 16) > 0x10FFFF:
            raise Unsupported("a malformed \\u{...} escape", syntax=True)
        return _code_point(int(digits, 16)), end + 1
    code = _hex_run(pattern, i + 2, 4)
    if code is None:
        return "u", i + 2  # an identity escape outside Unicode mode: the letter itself
    if 0xD800 <= code <= 0xDBFF and pattern.startswith("\\u", i + 6):
        low = _hex_run(pattern, i + 8, 4)
        if low is not None and 0xDC00 <= low <= 0xDFFF:
            return _code_point(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), i + 12
    return _code_point(code), i + 6


def _escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    """The escape at ``i`` (a backslash) in RE2 syntax, and the index after it."""
    if i + 1 >= len(pattern):
        raise Unsupported("a trailing backslash", syntax=True)
    c = pattern[i + 1]
    if c == "u":
        return _unicode_escape(pattern, i)
    if c == "x":
        code = _hex_run(pattern, i + 2, 2)
        return (_code_point(code), i + 4) if code is not None else ("x", i + 2)
    if c == "c" and i + 2 < len(pattern) and pattern[i + 2].isascii() and pattern[i + 2].isalpha():
        return _code_point(ord(pattern[i + 2]) % 32), i + 3
    if c == "s":
        return (_SPACE_CLASS if in_class else f"[{_SPACE_CLASS}]"), i + 2
    if c == "S":
        return (r"\S" if in_class else f"[^{_SPACE_CLASS}]"), i + 2
    if c == "0" and not pattern[i + 2 : i + 3].isdigit():
        return r"\x00", i + 2
    if c.isdigit():
        if in_class:
            raise Unsupported("a legacy octal escape")
        raise Unsupported("a backreference")
    if c == "k":
        raise Unsupported("a named backreference")
    if c in _ASSERTIONS:
        if in_class:
            return (r"\x08", i + 2) if c == "b" else ("B", i + 2)
        return "\\" + c, i + 2
    if c in _SHARED_ESCAPES:
        return "\\" + c, i + 2
    if c in "pP":
        return "\\" + c, i + 2  # RE2 knows \p{L}, \pL; it refuses what it does not know
    if c.isascii() and c.isalnum():
        return c, i + 2  # an identity escape: \a is a, \e is e
    return "\\" + c, i + 2  # escaped punctuation (or a character beyond ASCII) means itself


def to_re2(pattern: str) -> str:
    """``pattern`` (ECMA-262) in RE2 syntax; raises ``Unsupported`` for what RE2 lacks."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            text, i = _escape(pattern, i, in_class)
            out.append(text)
            continue
        if in_class:
            if c == "]":
                in_class = False
                out.append("]")
            elif c == "[":
                out.append(r"\[")  # ECMA-262 has no [:alpha:] classes: a bracket is a bracket
            else:
                out.append(c)
            i += 1
            continue
        if c == "[":
            negated = pattern.startswith("[^", i)
            start = i + (2 if negated else 1)
            if pattern.startswith("]", start):
                # [] matches nothing and [^] anything in ECMA-262; RE2 reads ] as a member.
                out.append(r"[\x{0}-\x{10ffff}]" if negated else r"[^\x{0}-\x{10ffff}]")
                i = start + 1
                continue
            out.append("[^" if negated else "[")
            in_class = True
            i = start
            continue
        if c == "(":
            if pattern.startswith(_LOOKAROUND, i):
                raise Unsupported("a lookaround assertion")
            if pattern.startswith("(?<", i):
                out.append("(?P<")
                i += 3
                continue
        if c == ".":
            out.append(_DOT)
            i += 1
            continue
        out.append(c)
        i += 1
    if in_class:
        raise Unsupported("an unterminated character class", syntax=True)
    return "".join(out)


def _python_reads(pattern: str) -> bool:
    """Whether Python's parser accepts ``pattern`` (a second opinion on its syntax; it is
    compiled, never matched, and compiling a pattern of bounded length is linear)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "possible nested set" and the like
        try:
            re.compile(pattern)
        except (re.error, OverflowError, RecursionError, ValueError):
            return False
    return True


def _load_re2() -> Any:
    try:
        import re2
    except ImportError:
        return None
    return re2


class PeerPattern:
    """A peer's pattern, compiled for RE2, or the reason it is not enforced.

    ``problem`` is ``None`` when ``search`` may be called.  ``invalid`` is true when
    the pattern is not a regular expression in either dialect (a broken schema, as
    opposed to one using a feature we do not run).  ``compile_cost`` is the units its
    compilation is estimated to have cost, for the caller to charge once.
    """

    __slots__ = ("_regexp", "compile_cost", "invalid", "problem", "program_size", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self.problem: str | None = None
        self.invalid = False
        self.program_size = 0
        self._regexp: Any = None
        self.compile_cost = 1 + len(source) // 8
        if len(source) > MAX_PATTERN_LENGTH:
            self.problem = f"the pattern is longer than {MAX_PATTERN_LENGTH} characters"
            return
        if _LONE_SURROGATE.search(source) is not None:
            # A raw one (a JSON "\\udcb8" in the schema): RE2 compiles UTF-8, which cannot hold it.
            self.problem = "it holds a lone surrogate, which RE2 cannot run"
            return
        re2 = _load_re2()
        if re2 is None:
            self.problem = "no linear-time regex engine is installed (pip install google-re2)"
            return
        try:
            translated = to_re2(source)
        except Unsupported as exc:
            if exc.syntax:
                self._invalid()
            else:
                self.problem = f"it uses {exc}, which RE2 cannot run"
            return
        options = re2.Options()
        options.max_mem = RE2_MAX_MEM
        options.log_errors = False
        try:
            self._regexp = re2.compile(translated, options)
        except re2.error as exc:
            reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
            if "too large" in reason:
                # RE2 built most of a program before refusing it: a few milliseconds.
                self.compile_cost += RE2_MAX_MEM // 64
                self.problem = f"it compiles to a program larger than {RE2_MAX_MEM // 1024} KiB"
            elif reason.startswith(_SYNTAX_ERRORS) and not _python_reads(self.source):
                self._invalid()
            else:
                self.problem = f"RE2 refuses it ({reason})"
            return
        self.program_size = self._regexp.programsize
        self.compile_cost += self.program_size // 4

    def _invalid(self) -> None:
        self.invalid = True
        self.problem = "it is not a valid regular expression"

    def match_cost(self, text: str) -> int:
        """The units ``search(text)`` is charged."""
        return 1 + len(text) * max(self.program_size, 1) // MATCH_UNIT_DIVISOR

    def search(self, text: str, budget: WorkBudget) -> bool:
        """Whether the pattern matches somewhere in ``text`` (JSON Schema's unanchored
        match); charges ``budget`` first and raises ``BudgetExhausted`` if it cannot pay."""
        if self._regexp is None:
            raise ValueError(f"pattern not enforced: {self.problem}")
        budget.spend(self.match_cost(text))
        return self._regexp.search(_utf8_safe(text)) is not None

    def __repr__(self) -> str:
        state = "enforced" if self.problem is None else f"not enforced: {self.problem}"
        return f"PeerPattern({self.source!r}, {state})"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8_safe(text: str) -> str:
    """``text`` with each lone surrogate (a legal JSON escape, so a peer can send one)
    replaced by U+FFFD: RE2 matches UTF-8, which cannot carry them.  The character count
    is unchanged, so ``.``, negated classes and anchors see the same string; only a
    pattern naming U+FFFD itself could tell the two apart."""
    if _LONE_SURROGATE.search(text) is None:
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


@functools.lru_cache(maxsize=64)
def peer_pattern(source: str) -> PeerPattern:
    """``PeerPattern(source)``, memoised: the same few patterns recur across calls (a
    form asked again, a tool called again).  64 entries of at most ``RE2_MAX_MEM`` each."""
    return PeerPattern(source)
