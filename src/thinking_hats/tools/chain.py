"""A session's chain of thoughts as a graph: thoughts as nodes, the next thought, revisions and branches as edges;
drawn as SVG for the web view and as Mermaid for the Markdown report.

Both drawings are made here, in Python, from the stored entries: the page needs no drawing library, and every
string that reaches a drawing is escaped for it (XML text in SVG, Mermaid entity codes in Mermaid), so no thought
text can close a label, add a node or run script.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..store import Entry

EdgeKind = Literal["next", "revision", "branch"]


@dataclass(frozen=True)
class Node:
    seq: int
    number: int
    lane: int  # 0: the main line; n: the n-th branch, in order of first use
    branch: str | None
    strategy: str  # the route's strategy, "record" for a thought recorded without analysis, "step" for CRASH
    status: str  # "ok" | "refused" (a limit) | "failed" (no analysis succeeded)
    excerpt: str


@dataclass(frozen=True)
class Edge:
    source: int  # seq
    target: int  # seq
    kind: EdgeKind


@dataclass(frozen=True)
class Chain:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    lanes: tuple[str | None, ...]


def status_of(entry: Entry) -> tuple[str, str]:
    """(strategy, status) of an entry, from the reply that was sent for it."""
    reply = entry.reply.get("reply")
    if not isinstance(reply, dict):  # a CRASH step stores its reply differently
        return "step", "failed" if entry.failed else "ok"
    analysis = reply.get("analysis") or {}
    strategy = str(analysis.get("strategy") or "") if reply.get("mode") == "augmented" else "record"
    if reply.get("limitReached"):
        return strategy or "record", "refused"
    return strategy or "record", "failed" if entry.failed else "ok"


def chain_of(entries: Sequence[Entry]) -> Chain:
    lanes: list[str | None] = [None]
    nodes: list[Node] = []
    edges: list[Edge] = []
    last_in_lane: dict[int, int] = {}
    by_number: dict[int, int] = {}  # number -> seq of its newest entry so far (a revision's or branch's origin)
    for entry in entries:
        branch = entry.branch_id
        if branch not in lanes:
            lanes.append(branch)
        lane = lanes.index(branch)
        d: dict[str, Any] = entry.data
        origin = _number(d.get("branch_from_thought") or d.get("branch_from"))
        if lane in last_in_lane:
            edges.append(Edge(last_in_lane[lane], entry.seq, "next"))
        elif origin is not None and origin in by_number:
            edges.append(Edge(by_number[origin], entry.seq, "branch"))
        revised = _number(d.get("revises_thought") or d.get("revises_step"))
        if revised is not None and revised in by_number:
            edges.append(Edge(entry.seq, by_number[revised], "revision"))
        strategy, status = status_of(entry)
        text = str(d.get("thought", ""))
        excerpt = " ".join(text.split())[:60]
        nodes.append(Node(entry.seq, entry.number, lane, branch, strategy, status, excerpt))
        last_in_lane[lane] = entry.seq
        by_number.setdefault(entry.number, entry.seq)
        if not branch:
            by_number[entry.number] = entry.seq  # on the main line, the newest wording is the one revised
    return Chain(tuple(nodes), tuple(edges), tuple(lanes))


def _number(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- SVG (the web view) -------------------------------------------------------------------------------------
ROW, LANE, WIDTH, HEIGHT, LEFT = 34, 176, 156, 24, 28


def svg(chain: Chain) -> str:
    """The chain as an inline SVG element: one row per entry, one column per branch. Every node links to its
    thought on the page (#t<seq>); the styles are the page's (classes only, no inline style: the CSP allows none)."""
    rows = {node.seq: i for i, node in enumerate(chain.nodes)}
    lanes = {node.seq: node.lane for node in chain.nodes}
    width = LEFT + len(chain.lanes) * LANE
    height = max(len(chain.nodes), 1) * ROW + 8
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chain" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" role="img" aria-label="the chain of thoughts">'
    ]
    for i, lane in enumerate(chain.lanes[1:], 1):
        out.append(f'<text class="lane" x="{LEFT + i * LANE}" y="12">branch {_xml(lane)}</text>')
    for edge in chain.edges:
        out.append(_edge(edge, rows, lanes))
    for i, node in enumerate(chain.nodes):
        x, y = LEFT + node.lane * LANE, 18 + i * ROW
        mark = "" if node.status == "ok" else f" · {node.status}"
        title = f"thought {node.number}{' on ' + node.branch if node.branch else ''}: {node.excerpt}"
        out.append(
            f'<a href="#t{node.seq}" class="node {_xml(node.status)} s-{_xml(node.strategy)}"'
            f' data-seq="{node.seq}"><title>{_xml(title)}</title>'
            f'<rect x="{x}" y="{y}" width="{WIDTH}" height="{HEIGHT}" rx="5"/>'
            f'<text x="{x + 8}" y="{y + 16}">#{node.number} {_xml(node.strategy)}{_xml(mark)}</text></a>'
        )
    out.append("</svg>")
    return "".join(out)


def _edge(edge: Edge, rows: dict[int, int], lanes: dict[int, int]) -> str:
    def anchor(seq: int) -> tuple[int, int]:
        return LEFT + lanes[seq] * LANE, 18 + rows[seq] * ROW

    (x1, y1), (x2, y2) = anchor(edge.source), anchor(edge.target)
    if edge.kind == "next":
        cx = x1 + WIDTH // 2
        return f'<path class="edge next" d="M{cx} {y1 + HEIGHT} L{cx} {y2}"/>'
    if edge.kind == "branch":
        sx, sy, tx, ty = x1 + WIDTH, y1 + HEIGHT // 2, x2 + WIDTH // 2, y2
        return f'<path class="edge branch" d="M{sx} {sy} C{tx} {sy} {tx} {sy} {tx} {ty}"/>'
    # A revision points back up to the thought it revises, bowed out to the left of the column.
    bow = x1 - 10 - min(abs(rows[edge.source] - rows[edge.target]) * 3, 20)
    return (
        f'<path class="edge revision" d="M{x1} {y1 + HEIGHT // 2} C{bow} {y1 + HEIGHT // 2}'
        f' {bow} {y2 + HEIGHT // 2} {x2} {y2 + HEIGHT // 2}"/>'
    )


def _xml(value: object) -> str:
    return html.escape(str(value), quote=True)


# --- Mermaid (the Markdown report) --------------------------------------------------------------------------
def mermaid(chain: Chain) -> list[str]:
    """The chain as a fenced Mermaid flowchart. Labels are quoted and every character but a letter, a digit or a
    space is written as a Mermaid entity code (#35; for '#'), so a label cannot close its quotes, its brackets
    or the fence, nor start an HTML tag, a link or a directive."""
    lines = ["```mermaid", "flowchart TD"]
    for node in chain.nodes:
        mark = "" if node.status == "ok" else f" {node.status}"
        branch = f" on {node.branch}" if node.branch else ""
        label = f"{node.number}{branch} · {node.strategy}{mark}: {node.excerpt}"
        lines.append(f'  t{node.seq}["{_mermaid_text(label)}"]')
    arrows = {"next": "-->", "revision": "-. revises .->", "branch": "== branch ==>"}
    for edge in chain.edges:
        lines.append(f"  t{edge.source} {arrows[edge.kind]} t{edge.target}")
    lines.append("```")
    return lines


def _mermaid_text(text: str) -> str:
    return "".join(c if (c.isascii() and c.isalnum()) or c == " " else f"#{ord(c)};" for c in text)
