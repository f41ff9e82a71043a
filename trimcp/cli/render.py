"""How ``tools call``, ``resources read`` and ``prompts get`` print what a server answered.

Theory of operation
-------------------
Spec "Server features": a tool result is content blocks (text, image, audio, resource
link, embedded resource) and, from 2025-06-18, ``structuredContent``, whose JSON a tool
SHOULD also send as a text block; a read resource is contents (text or a base64 blob);
a prompt is messages, each one content block.  In text mode each block is printed
once, as a person reads it:

* a text block, an embedded text resource and a text content: the text as it is (an
  embedded resource in a tool result after a ``[resource URI, TYPE]`` line);
* an image, audio or binary blob: one line, ``[image/png, 3.9 KB]``, never its base64;
  with ``--save DIR`` the bytes are written to a file in DIR and the line names it;
* a resource link: ``[link URI: NAME, TYPE]``; another block type: its JSON, one line;
* ``structuredContent``: only when no text block already holds the same JSON (what the
  spec asks servers to send), after a ``structured content:`` line unless it is all there is.

``--raw`` prints everything as the server sent it: text as text, every other block as its
JSON (base64 included), and the structured content always.  ``--format json`` prints
the whole answer as JSON and is not this module's.  Listings (``tools list``, ...)
print one line per item: a tool with its parameters (``?``: optional), a resource with
its URI, a prompt with its arguments.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from .command_line import UsageError

__all__ = ["Saver", "headline", "human_size", "print_listing", "print_result", "saver_for"]

_BINARY = ("image", "audio")
#: What a saved file's name keeps of a tool, prompt or URI: nothing that leaves DIR.
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def human_size(size: int) -> str:
    """``67 B``, ``3.9 KB``, ``1.2 MB`` (decimal units)."""
    if size < 1000:
        return f"{size} B"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1000
        if value < 999.95:
            return f"{value:.1f} {unit}"
    return f"{value:.1f} GB"


class Saver:
    """Writes the binary blocks of one answer to files in ``folder``, named after ``stem``."""

    def __init__(self, folder: Path, stem: str) -> None:
        self.folder = folder
        self.stem = _UNSAFE.sub("_", stem).strip("._") or "output"
        self.count = 0

    def save(self, data: bytes, mime: str | None, hint: str | None = None) -> Path:
        """Write ``data`` to a file of its own, named after ``hint`` (a resource's last URI
        segment, kept whole when it has an extension) or the stem and a number, with the
        extension of ``mime``; never over an existing file (a number is added to the name)."""
        self.count += 1
        ext = (mimetypes.guess_extension(mime.split(";")[0].strip()) if mime else None) or ".bin"
        named = _UNSAFE.sub("_", hint).strip("._") if hint else ""
        base, suffix = (Path(named).stem, Path(named).suffix) if Path(named).suffix else (named, ext)
        base = base or f"{self.stem}-{self.count}"
        for attempt in range(1000):
            path = self.folder / (f"{base}{suffix}" if attempt == 0 else f"{base}-{attempt}{suffix}")
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
            except OSError as exc:
                raise UsageError(f"cannot write --save {path}: {exc.strerror or exc}") from None
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            return path
        raise UsageError(f"cannot write --save {self.folder}: too many files named {base}-N{suffix}")


def saver_for(folder: str | None, stem: str) -> Saver | None:
    """The ``--save DIR`` saver (DIR created now: a folder that cannot be is a usage error
    before anything starts), or ``None`` without ``--save``."""
    if folder is None:
        return None
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot use --save {folder}: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK):
        raise UsageError(f"cannot use --save {folder}: not writable")
    return Saver(path, stem)


def _decoded(data: object) -> bytes | None:
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _binary_line(label: str, data: object, mime: str | None, saver: Saver | None, hint: str | None = None) -> str:
    """``[image/png, 3.9 KB]`` (``label`` first when it says more), saved with ``--save``."""
    raw = _decoded(data)
    what = ", ".join(filter(None, (label, mime or "unknown type")))
    if raw is None:
        return f"[{what}, not valid base64: {len(data) if isinstance(data, str) else 0} characters]"
    line = f"[{what}, {human_size(len(raw))}]"
    if saver is not None:
        line += f" saved to {saver.save(raw, mime, hint)}"
    return line


def _block(block: Mapping[str, Any], saver: Saver | None, *, raw: bool, in_result: bool) -> str:
    """One content block as text (see the module docstring)."""
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        text: str = block["text"]
        return text
    if raw:
        return json.dumps(block, ensure_ascii=False)
    mime = block.get("mimeType") if isinstance(block.get("mimeType"), str) else None
    if kind in _BINARY:
        return _binary_line("", block.get("data"), mime, saver)
    if kind == "resource_link":
        facts = ", ".join(str(block[k]) for k in ("name", "mimeType") if isinstance(block.get(k), str))
        return f"[link {block.get('uri')}{': ' + facts if facts else ''}]"
    if kind == "resource" and isinstance(block.get("resource"), Mapping):
        return _contents(block["resource"], saver, header=in_result)
    return json.dumps(block, ensure_ascii=False)


def _contents(item: Mapping[str, Any], saver: Saver | None, *, header: bool) -> str:
    """A resource's contents: its text (after a header line inside a tool result), or its blob summarised."""
    uri = str(item.get("uri", ""))
    mime = item.get("mimeType") if isinstance(item.get("mimeType"), str) else None
    if isinstance(item.get("text"), str):
        text: str = item["text"]
        return f"[resource {uri}{', ' + mime if mime else ''}]\n{text}" if header else text
    if "blob" in item:
        name = uri.rstrip("/").rsplit("/", 1)[-1] if "/" in uri else None
        return _binary_line(f"resource {uri}", item.get("blob"), mime, saver, name)
    return json.dumps(dict(item), ensure_ascii=False)


def _same_json(text: str, value: object) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def print_result(value: Mapping[str, Any], out: TextIO, *, raw: bool = False, saver: Saver | None = None) -> None:
    """A tool result, a read resource or a prompt, in text (see the module docstring)."""
    lines: list[str] = []
    for block in value.get("content") or ():
        lines.append(_block(block, saver, raw=raw, in_result=True))
    for item in value.get("contents") or ():
        if raw:
            lines.append(item["text"] if isinstance(item.get("text"), str) else json.dumps(item, ensure_ascii=False))
        else:
            lines.append(_contents(item, saver, header=False))
    for message in value.get("messages") or ():
        block = message.get("content", message) if isinstance(message, Mapping) else {}
        if isinstance(block, Mapping):
            lines.append(_block(block, saver, raw=raw, in_result=False))
    if "structuredContent" in value:
        structured = value["structuredContent"]
        texts = [
            b["text"] for b in value.get("content") or () if b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        said = any(_same_json(text, structured) for text in texts)
        if raw or not said:
            shown = json.dumps(structured, indent=2, ensure_ascii=False)
            lines.append(shown if not lines else f"structured content:\n{shown}")
    for line in lines:
        out.write(line if line.endswith("\n") else line + "\n")


def _type_of(spec: object) -> str:
    kind = spec.get("type") if isinstance(spec, dict) else None
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    return str(kind) if kind else "any"


def headline(item: Mapping[str, Any], name: str | None = None) -> str:
    """One listed item in text mode: a tool with its parameters (``?``: optional), a resource
    with its URI, a prompt with its arguments; ``name`` in place of the item's own."""
    if "inputSchema" in item:
        schema = item["inputSchema"] if isinstance(item["inputSchema"], dict) else {}
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        required = set(schema.get("required") or [])
        params = ", ".join(f"{key}{'' if key in required else '?'}: {_type_of(spec)}" for key, spec in props.items())
        return f"{name or item['name']}  ({params})"
    if "uri" in item or "uriTemplate" in item:
        return f"{item.get('uri') or item.get('uriTemplate')}  {item.get('name', '')}".rstrip()
    if "arguments" in item:
        args = ", ".join(f"{a.get('name')}{'' if a.get('required') else '?'}" for a in item["arguments"] or [])
        return f"{name or item['name']}  ({args})"
    return str(name or item.get("name"))


def print_listing(items: Sequence[Mapping[str, Any]], out: TextIO, names: Sequence[str] | None = None) -> None:
    """One line per item: its headline and the first line of its description."""
    for index, item in enumerate(items):
        desc = (item.get("description") or "").splitlines()[0:1]
        line = headline(item, names[index] if names is not None else None)
        out.write(f"{line}{'  - ' + desc[0] if desc else ''}\n")
