"""The floors under a model-using thought: the same model calls as a `triple` thought (three hats at once, then the
synthesis, with the same prompts), made without the server, in bursts of concurrent thoughts; CPU per thought.

    python benchmarks/model_floor.py --base-url http://127.0.0.1:PORT/v1 --stack agno    # JSON on stdout

Stacks: `agno` (one agno agent per role over one openai SDK client over one httpx2 client: the stack the design
requires, used as directly as it allows), `sdk` (the openai SDK alone over one httpx2 client), `httpx` (one
httpx2 client posting the JSON itself). benchmarks/run.py runs each in a process of its own, beside the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

HATS = ("factual", "critical", "optimistic")  # a triple thought's hats for the benchmark's thought
MAX_TOKENS = 700
Call = Callable[[str, str], Awaitable[str]]  # (role, user message) -> the model's text


def prompts() -> tuple[dict[str, str], Callable[[str], str], Callable[[str, str], str]]:
    """The server's own prompts, rendered once up front: (system prompt by role, thought message, synthesis input)."""
    from thinking_hats.analysis import ThoughtContext
    from thinking_hats.hats.prompts import Prompts, thought_variables

    rendered = Prompts()
    systems = {role: rendered.render(role) for role in (*HATS, "synthesis")}

    def message(text: str) -> str:
        return rendered.render("thought", **thought_variables(ThoughtContext(text, 1, 1)))

    def synthesis(message: str, analyses: str) -> str:
        return rendered.render("analyses", thought_message=message.strip(), analyses=analyses)

    return systems, message, synthesis


def http2(connections: int) -> Any:
    import httpx2

    transport = httpx2.AsyncHTTPTransport(
        limits=httpx2.Limits(max_connections=connections, max_keepalive_connections=connections),
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
    )
    return httpx2.AsyncClient(transport=transport, timeout=30)


def stack_agno(base_url: str, systems: dict[str, str], http: Any) -> Call:
    from agno.agent import Agent
    from agno.models.openai.like import OpenAILike
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key="stub", base_url=base_url, max_retries=0, http_client=http)
    agents = {}
    for role, system in systems.items():
        model = OpenAILike(id="stub-model", api_key="stub", base_url=base_url, max_tokens=MAX_TOKENS, retries=0)
        model.async_client = client
        agents[role] = Agent(model=model, system_message=system, telemetry=False, retries=0)

    async def call(role: str, message: str) -> str:
        out = await agents[role].arun(message)
        return str(out.content)

    return call


def stack_sdk(base_url: str, systems: dict[str, str], http: Any) -> Call:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key="stub", base_url=base_url, max_retries=0, http_client=http)

    async def call(role: str, message: str) -> str:
        reply = await client.chat.completions.create(
            model="stub-model",
            messages=[{"role": "system", "content": systems[role]}, {"role": "user", "content": message}],
            max_tokens=MAX_TOKENS,
        )
        return reply.choices[0].message.content or ""

    return call


def stack_httpx(base_url: str, systems: dict[str, str], http: Any) -> Call:
    url, headers = f"{base_url}/chat/completions", {"Authorization": "Bearer stub"}

    async def call(role: str, message: str) -> str:
        body = {
            "model": "stub-model",
            "messages": [{"role": "system", "content": systems[role]}, {"role": "user", "content": message}],
            "max_tokens": MAX_TOKENS,
        }
        response = await http.post(url, json=body, headers=headers)
        response.raise_for_status()
        return str(response.json()["choices"][0]["message"]["content"])

    return call


STACKS = {"agno": stack_agno, "sdk": stack_sdk, "httpx": stack_httpx}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    os.environ.setdefault("AGNO_TELEMETRY", "false")
    systems, message_of, synthesis_of = prompts()
    http = http2(args.concurrent * len(HATS))
    call = STACKS[args.stack](args.base_url, systems, http)

    async def thought(index: int) -> None:
        message = message_of(f"{args.thought} ({index})")
        texts = await asyncio.gather(*(call(role, message) for role in HATS))
        analyses = "\n\n".join(f"### {role} hat\n\n{text}" for role, text in zip(HATS, texts, strict=True))
        await call("synthesis", synthesis_of(message, analyses))

    async def burst() -> None:
        await asyncio.gather(*(thought(i) for i in range(args.concurrent)))

    for _ in range(args.warm):
        await burst()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(args.bursts):
        await burst()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await http.aclose()
    thoughts = args.bursts * args.concurrent
    return {"stack": args.stack, "thoughts": thoughts, "cpu_ms_per_thought": round(cpu / thoughts * 1000, 3),
            "wall_s_per_burst": round(wall / args.bursts, 3)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--stack", choices=sorted(STACKS), required=True)
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--bursts", type=int, default=5)
    parser.add_argument("--warm", type=int, default=2)
    parser.add_argument("--thought", default="Should we move the payments service to a new region this quarter?")
    print(json.dumps(asyncio.run(run(parser.parse_args()))))


if __name__ == "__main__":
    main()
