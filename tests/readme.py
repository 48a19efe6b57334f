"""The README's commands, read from its fenced `bash` blocks, for tests/test_readme.py and for .ci/run.

python tests/readme.py start      # print the quick start's server command (CI runs it on a fresh copy)
python tests/readme.py requests   # print what CI pipes into it: initialize, initialized, tools/list
python tests/readme.py check FILE # exit 1 unless FILE holds the initialize and tools/list replies
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
START_COMMENT = "# start the server"


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def commands(text: str | None = None) -> list[str]:
    """Every command of the README's bash blocks: comment lines dropped, continued lines joined, a trailing
    comment removed."""
    text = README.read_text(encoding="utf-8") if text is None else text
    found = []
    for block in blocks(text, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            if line and not line.startswith("#"):
                found.append(line)
    return found


def start_command() -> str:
    """The quick start's first command: the line after the comment that says it starts the server."""
    for block in blocks(README.read_text(encoding="utf-8"), "bash"):
        lines = block.splitlines()
        for i, line in enumerate(lines[:-1]):
            if line.startswith(START_COMMENT):
                return lines[i + 1].strip()
    raise SystemExit(f"README.md has no bash line after {START_COMMENT!r}")


REQUESTS = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "ci", "version": "1"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def check(replies: str) -> list[str]:
    """What is wrong with the server's replies to REQUESTS (nothing: an empty list)."""
    by_id = {}
    for line in replies.splitlines():  # pip's output comes first on the same stdout
        if line.startswith('{"jsonrpc"'):
            message = json.loads(line)
            by_id[message.get("id")] = message
    problems = []
    if "serverInfo" not in by_id.get(1, {}).get("result", {}):
        problems.append("no initialize reply")
    tools = {t["name"] for t in by_id.get(2, {}).get("result", {}).get("tools", [])}
    if tools != {"sequentialthinking", "crash", "sequential_thinking"}:
        problems.append(f"tools/list gave {sorted(tools)}")
    return problems


def main(argv: list[str]) -> int:
    if argv == ["start"]:
        print(start_command())
    elif argv == ["requests"]:
        print("\n".join(json.dumps(r) for r in REQUESTS))
    elif len(argv) == 2 and argv[0] == "check":
        problems = check(Path(argv[1]).read_text(encoding="utf-8"))
        for problem in problems:
            print(f"the README's quick start: {problem}", file=sys.stderr)
        return 1 if problems else 0
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
