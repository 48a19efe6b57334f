"""Text that reaches a terminal: control characters from thoughts and model output made visible, never obeyed.

A thought, a CRASH field or a model reply can carry ESC sequences (set the window title, clear the screen, write
hyperlinks), BEL, backspaces, carriage returns that overwrite a line, C1 controls (a one-byte CSI) or bidi
overrides that reorder what is shown. Every place that writes such text to stdout or stderr passes it through
`printable` (or `json_text` for JSON), so the user sees `␛]0;title␇` instead of a retitled window.
"""

from __future__ import annotations

import json
import re
from typing import Any

# C0 controls (except newline and tab), DEL, C1 controls, bidi embeddings, overrides and isolates, the Unicode
# line and paragraph separators, and the BOM / zero-width no-break space some terminals still act on.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
# In JSON text the C0 controls are already escaped; these are the ones json.dumps(ensure_ascii=False) leaves raw.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␛ ␇ ␈ ␍ ...
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\u{code:04x}"  # no picture for C1 and format characters: the escape a programmer would write


def printable(text: object, newlines: bool = True) -> str:
    """`text` with every control character shown as a visible symbol. Tabs stay; newlines stay (or become ␤ when
    `newlines` is False, for text that must stay on one line). A CRLF is a newline, a lone CR is shown."""
    value = str(text).replace("\r\n", "\n")
    value = _UNSAFE.sub(_visible, value)
    return value if newlines else value.replace("\n", "\u2424")


def json_text(value: Any, indent: int | None = None) -> str:
    """JSON for a terminal: readable non-ASCII text, but every control character escaped as `\\uXXXX`."""
    text = json.dumps(value, indent=indent, ensure_ascii=False, default=str)
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def counted(count: int, noun: str) -> str:
    """`1 principal`, `2 principals`: a count with its noun in the right number (regular plurals only)."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"
