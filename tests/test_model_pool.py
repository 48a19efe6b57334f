"""The model HTTP pool is sized for the concurrency the server allows, so a burst of thoughts reuses connections:
counted at the stub model server (real sockets, agno and the SDK unmodified), not at a fake transport."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from benchmarks.stub_llm import StubLLM
from mcp import Client

from thinking_hats.config import Settings
from thinking_hats.server import build_server

THOUGHTS = 20
HATS_IN_FULL = 5


@pytest.fixture
async def stub() -> AsyncIterator[StubLLM]:
    async with StubLLM(latency=0.0) as running:
        yield running


def full_thought(session: str) -> dict[str, Any]:
    return {
        "thought": "Should we move the payments service to a new region, weighing the risk and the cost?",
        "thoughtNumber": 1,
        "totalThoughts": 1,
        "nextThoughtNeeded": False,
        "sessionId": session,
        "strategy": "full",
    }


async def burst(client: Client, stub: StubLLM, tag: str) -> int:
    """20 concurrent full thoughts whose 100 hat calls are all in flight at once, then their 20 syntheses; the
    connections it opened."""
    before = stub.connections
    stub.hold(THOUGHTS * HATS_IN_FULL, THOUGHTS)
    results = await asyncio.gather(*(client.call_tool("sequentialthinking", full_thought(f"{tag}-{i}"))
                                     for i in range(THOUGHTS)))  # fmt: skip
    for result in results:
        assert not result.is_error, result
        assert result.structured_content is not None
        assert result.structured_content["usage"]["llmCalls"] == 6
    return stub.connections - before


async def test_a_second_burst_of_twenty_full_thoughts_opens_no_new_connection(stub: StubLLM) -> None:
    settings = Settings(
        llm_provider="openai-compatible",
        llm_base_url=stub.base_url,
        llm_model="stub-model",
        thinking_concurrent_thoughts=THOUGHTS,
        thinking_store="memory",
    )
    async with Client(build_server(settings)) as client:
        first = await burst(client, stub, "first")
        second = await burst(client, stub, "second")

    # Every call of the burst in flight at once: one connection each (each role's pool holds its own).
    assert first == THOUGHTS * (HATS_IN_FULL + 1)
    assert second == 0


def test_only_an_https_endpoint_loads_the_ca_bundle_and_all_pools_share_one_tls_context() -> None:
    import ssl

    from thinking_hats.hats.providers import http_client, resolve_provider

    local = resolve_provider(Settings(llm_provider="ollama"))
    remote = resolve_provider(Settings(llm_provider="openai", openai_api_key="sk-x"))
    assert local is not None and remote is not None
    plain, secure = http_client(local)._transport, http_client(remote)._transport
    assert plain._tls.verify_mode == ssl.CERT_NONE  # type: ignore[attr-defined]
    assert secure._tls.verify_mode == ssl.CERT_REQUIRED  # type: ignore[attr-defined]
    pools = [secure._pool(role, lane) for role in ("critical", "synthesis") for lane in (0, 1)]  # type: ignore[attr-defined]
    assert len({id(p._pool._ssl_context) for p in pools}) == 1
