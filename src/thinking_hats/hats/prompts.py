"""Prompt files: Markdown under `prompts/<pack>/<name>.md`, rendered by name with explicit `{{ variables }}`.

A name resolves to the first file that exists of: `<override_dir>/<name>.md` (THINKING_PROMPTS_DIR), the
built-in `<pack>/<name>.md`, the built-in `default/<name>.md`. Files are read once and cached.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis import HATS, ThoughtContext

if TYPE_CHECKING:
    from ..config import Settings

DEFAULT_PACK = "default"
# Every name the orchestrator renders (the hats' and the synthesizer's system prompts, the hats' user message,
# the synthesizer's user message) and the variables it passes each: a file may use these and no others.
PROMPT_VARIABLES: dict[str, tuple[str, ...]] = dict.fromkeys((*HATS, "synthesis"), ()) | {
    "thought": ("thought", "number", "total", "context"),
    "analyses": ("thought_message", "analyses"),
}
PROMPT_NAMES: tuple[str, ...] = tuple(PROMPT_VARIABLES)

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


class PromptError(ValueError):
    """A prompt that cannot be found or rendered; the message says which file and what to fix."""


def builtin_dir() -> Path:
    """Where the shipped prompts live: inside the installed package, else the checkout's `prompts/`."""
    packaged = resources.files("thinking_hats") / "prompts"
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "prompts"  # editable install / source checkout


class Prompts:
    def __init__(self, pack: str = DEFAULT_PACK, override_dir: Path | None = None) -> None:
        self._root = builtin_dir()
        available = self.packs()
        if pack not in available:
            raise PromptError(
                f"unknown prompt pack {pack!r} (THINKING_PROMPT_PACK); available packs: "
                f"{', '.join(available) or f'none found in {self._root}'}"
            )
        if override_dir is not None:
            override_dir = override_dir.expanduser()
            if not override_dir.is_dir():
                raise PromptError(f"THINKING_PROMPTS_DIR {str(override_dir)!r} is not a directory")
        self.pack = pack
        self.override_dir = override_dir
        self._cache: dict[str, tuple[Path, str]] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> Prompts:
        return cls(pack=settings.thinking_prompt_pack, override_dir=settings.thinking_prompts_dir)

    def packs(self) -> list[str]:
        if not self._root.is_dir():
            return []
        return sorted(p.name for p in self._root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))

    def _candidates(self, name: str) -> list[Path]:
        found = [] if self.override_dir is None else [self.override_dir / f"{name}.md"]
        found.append(self._root / self.pack / f"{name}.md")
        if self.pack != DEFAULT_PACK:
            found.append(self._root / DEFAULT_PACK / f"{name}.md")
        return found

    def source(self, name: str) -> Path:
        """The file `name` resolves to."""
        if name in self._cache:
            return self._cache[name][0]
        if not _NAME.match(name):
            raise PromptError(f"invalid prompt name {name!r}")
        candidates = self._candidates(name)
        for path in candidates:
            if path.is_file():
                return path
        raise PromptError(
            f"unknown prompt {name!r}: none of {', '.join(str(p) for p in candidates)} exists "
            f"(known prompts: {', '.join(PROMPT_NAMES)})"
        )

    def text(self, name: str) -> str:
        """The raw template of `name`, read once."""
        cached = self._cache.get(name)
        if cached is None:
            path = self.source(name)
            try:
                cached = (path, path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                raise PromptError(f"cannot read prompt {name!r} from {path}: {exc}") from exc
            self._cache[name] = cached
        return cached[1]

    def variables(self, name: str) -> list[str]:
        """The placeholders `name` expects, in order of first use."""
        return list(dict.fromkeys(_PLACEHOLDER.findall(self.text(name))))

    def problems(self) -> list[str]:
        """What is wrong with each prompt the orchestrator renders, naming the file and the variable; [] if none.

        A template that uses a variable it is never given would fail every thought; checked once, up front.
        """
        found: list[str] = []
        for name, given in PROMPT_VARIABLES.items():
            try:
                unknown = [v for v in self.variables(name) if v not in given]
                if unknown:
                    names = ", ".join(f"{{{{ {v} }}}}" for v in unknown)
                    offer = f"it is given only {', '.join(given)}" if given else "it is given none"
                    found.append(
                        f"prompt {name!r} ({self.source(name)}) uses unknown variable{'s' if len(unknown) > 1 else ''} "
                        f"{names}: {offer}; remove or rename it"
                    )
                    continue
                self.render(name, **dict.fromkeys(given, ""))
            except PromptError as exc:
                found.append(str(exc))
        return found

    def validate(self) -> Prompts:
        """Self, when every prompt renders; else PromptError listing every problem."""
        problems = self.problems()
        if problems:
            raise PromptError("; ".join(problems))
        return self

    def render(self, name: str, **variables: object) -> str:
        """Substitute every `{{ var }}` in one pass (values are never re-expanded); extras are ignored."""
        template = self.text(name)
        missing = [v for v in dict.fromkeys(_PLACEHOLDER.findall(template)) if v not in variables]
        if missing:
            names = ", ".join(repr(v) for v in missing)
            raise PromptError(
                f"prompt {name!r} ({self._cache[name][0]}) needs variable{'s' if len(missing) > 1 else ''} "
                f"{names}, which {'were' if len(missing) > 1 else 'was'} not provided"
            )
        rendered = _PLACEHOLDER.sub(lambda m: str(variables[m.group(1)]), template)
        return rendered.strip() + "\n"


def clip(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters, at a word boundary, marked with an ellipsis."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(None, 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip() + " …"


def thought_variables(ctx: ThoughtContext, max_chars: int = 1500) -> dict[str, str]:
    """The variables of `thought.md` for `ctx`: the context block is bounded, whatever the session's length.

    Each earlier text (problem, revised or branch-origin thought, recent thought, previous synthesis) is
    clipped to `max_chars`; how many recent thoughts there are is the caller's choice (ThoughtContext.recent).
    """
    blocks: list[str] = []
    if ctx.problem:
        blocks.append(f"## Problem\n\n{clip(ctx.problem, max_chars)}")
    if ctx.recent:
        lines = "\n".join(f"- Thought {n}: {clip(text, max_chars)}" for n, text in ctx.recent)
        blocks.append(f"## Recent thoughts\n\n{lines}")
    if ctx.revised is not None:
        number, text = ctx.revised
        blocks.append(f"## This thought revises thought {number}\n\n{clip(text, max_chars)}")
    if ctx.branch_origin is not None:
        number, text = ctx.branch_origin
        name = f" '{ctx.branch_id}'" if ctx.branch_id else ""
        blocks.append(f"## This thought starts branch{name} from thought {number}\n\n{clip(text, max_chars)}")
    if ctx.previous_synthesis:
        blocks.append(f"## Previous synthesis\n\n{clip(ctx.previous_synthesis, max_chars)}")
    if ctx.confidence is not None:
        blocks.append(f"Stated confidence in this thought: {ctx.confidence:.2f}")
    return {
        "thought": ctx.thought.strip(),
        "number": str(ctx.thought_number),
        "total": str(ctx.total_thoughts),
        "context": "\n\n".join(blocks),
    }
