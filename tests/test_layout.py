"""The layout shows the parts: a folder per part, and no import from a lower part up to a higher one.

Every import of the package counts, at module level, inside functions (lazy) and under TYPE_CHECKING, except the
few listed in EXCEPTIONS with their reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "thinking_hats"

# The parts from the bottom up. A module may import its own part and the parts below it, never one above.
# A top-level module is a part of its own; a package is one part.
ORDER: list[set[str]] = [
    {"thinking_hats", "errors", "config", "terminal", "analysis"},  # shared: the version, errors, settings, types
    {"ops"},  # limits, charges, metrics, telemetry, logs, redaction, the console thought log
    {"store"},  # SQLite and PostgreSQL; counts in ops' limits and metrics, spans in ops' telemetry
    {"ops.ledger"},  # charges each model call in a store transaction of its own: ops, but on top of the store
    {"routing"},  # the learned router: reads a thought, needs only the shared types
    {"hats"},  # runs the hats the router picked, against the providers
    {"tools"},  # the tools' cores: sessions in the store, analysis from an Augmenter they are handed
    {"server", "serving"},  # the MCP surface and its transports: serving serves the server, server uses its pipes
    {"cli"},  # the command line, over everything
    {"__main__"},  # `python -m thinking_hats`
]
RANK = {part: rank for rank, parts in enumerate(ORDER) for part in parts}


def rank_of(module: str) -> tuple[str, int] | None:
    """The part of a module (its longest prefix in ORDER: `ops.ledger` before `ops`) and that part's rank."""
    names = module.split(".")[1:] or [module]
    for end in range(len(names), 0, -1):
        part = ".".join(names[:end])
        if part in RANK:
            return part, RANK[part]
    return None


# (importing module, imported module) -> why this upward import is allowed.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("thinking_hats.config", "thinking_hats.ops.redaction"): (
        "Settings masks the store URL in its own validation errors; redaction imports nothing of the package"
    ),
}

TOP_LEVEL = {"__init__", "__main__", "config", "errors", "server", "analysis", "terminal"}


def module_name(path: Path, source: Path = SOURCE) -> str:
    parts = path.relative_to(source.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, source: Path = SOURCE) -> list[tuple[int, str]]:
    """(line, imported module) for every import of the package in one file, lazy ones included."""
    module = module_name(path, source)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from pkg import module` imports the module
            found += [
                (node.lineno, f"{target}.{alias.name}" if target == "thinking_hats" else target) for alias in node.names
            ]
    return [(line, name) for line, name in found if name.split(".")[0] == "thinking_hats"]


def upward_imports(source: Path) -> list[str]:
    problems = []
    for path in sorted(source.rglob("*.py")):
        module = module_name(path, source)
        for line, imported in imports_of(path, source):
            if imported == "thinking_hats.__version__":
                continue  # the version string, from the package's own __init__
            here, there = rank_of(module), rank_of(imported)
            if here is None or there is None or there[1] <= here[1]:
                continue
            if any(
                imported == wanted or imported.startswith(wanted + ".") for got, wanted in EXCEPTIONS if got == module
            ):
                continue
            problems.append(
                f"{path.relative_to(source.parent)}:{line}: {module} ({here[0]}) imports {imported} ({there[0]})"
            )
    return problems


def unplaced(source: Path) -> list[str]:
    names = [p.stem for p in source.glob("*.py") if p.stem not in TOP_LEVEL]
    names += [p.name for p in source.iterdir() if p.is_dir() and (p / "__init__.py").exists() and p.name not in RANK]
    return sorted(names)


def test_no_module_imports_a_part_above_its_own() -> None:
    assert upward_imports(SOURCE) == []


def test_every_module_sits_in_a_part_and_only_shared_modules_stay_at_the_top() -> None:
    assert unplaced(SOURCE) == [], "put each of these in a part (or add it to TOP_LEVEL and ORDER, with the reason)"


def test_every_exception_to_the_order_is_still_needed() -> None:
    used = {(module_name(p), name) for p in SOURCE.rglob("*.py") for _, name in imports_of(p)}
    stale = [
        pair
        for pair in EXCEPTIONS
        if not any(m == pair[0] and (n == pair[1] or n.startswith(pair[1] + ".")) for m, n in used)
    ]
    assert stale == []


@pytest.mark.parametrize(
    ("where", "line", "part"),
    [
        ("store/__init__.py", "from ..tools.thoughts import Thinking\n", "tools"),
        ("ops/limits.py", "def f() -> None:\n    from ..cli.main import main\n", "cli"),  # lazy counts too
        ("routing/router.py", "from thinking_hats.hats import orchestrator\n", "hats"),
        (
            "store/sqlite.py",
            "if False:\n    from ..ops.ledger import Ledger\n",
            "ops.ledger",
        ),  # ops.ledger sits on the store
    ],
)
def test_an_upward_import_is_caught(tmp_path: Path, where: str, line: str, part: str) -> None:
    copy = tmp_path / "thinking_hats"
    for path in SOURCE.rglob("*.py"):
        target = copy / path.relative_to(SOURCE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text())
    before = set(upward_imports(copy))
    (copy / where).write_text((copy / where).read_text() + "\n" + line)
    problems = sorted(set(upward_imports(copy)) - before)
    assert len(problems) == 1
    assert problems[0].endswith(f"({part})")


def test_a_new_top_level_module_is_caught(tmp_path: Path) -> None:
    copy = tmp_path / "thinking_hats"
    copy.mkdir()
    for name in [*TOP_LEVEL, "stray"]:
        (copy / f"{name}.py").write_text("")
    assert unplaced(copy) == ["stray"]
