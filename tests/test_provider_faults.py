"""Provider faults against the real server over stdio, with the stub model server from benchmarks/.

For each fault: the reply arrives within the deadline, names what failed, shows no provider error text as
analysis, the thought is recorded, and the next thought in the session works.
"""

from __future__ import annotations

import itertools
import json
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from benchmarks.stub_llm import StubLLM
from mcp import Client, StdioServerParameters

from calls import text_of
from stdio_peer import peer, server_env

DEADLINE = 8.0
HAT_TIMEOUT = 1.0

pytestmark = pytest.mark.slow


def env_for(data: Path, base_url: str) -> dict[str, str]:
    return server_env(
        data,
        LLM_PROVIDER="openai-compatible",
        LLM_BASE_URL=base_url,
        LLM_MODEL="stub-model",
        THINKING_DEADLINE=str(DEADLINE),
        THINKING_HAT_TIMEOUT=str(HAT_TIMEOUT),
        THINKING_RETRY_WAIT="0.05",
        THINKING_MAX_RETRIES="2",
    )


def stdio(env: dict[str, str]) -> Client:
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "thinking_hats"], env=env))


@pytest.fixture
async def stub() -> AsyncIterator[StubLLM]:
    async with StubLLM(latency=0.01) as running:
        yield running


FAULTS: dict[str, tuple[dict[str, Any], str]] = {
    "429 with Retry-After": ({"status": 429, "retry_after": "0.3"}, "429 from openai-compatible"),
    "429 without Retry-After": ({"status": 429}, "429 from openai-compatible"),
    "500": ({"status": 500}, "500 from openai-compatible"),
    "502": ({"status": 502}, "502 from openai-compatible"),
    "503": ({"status": 503}, "503 from openai-compatible"),
    "slower than the hat timeout": ({"delay": 30}, "timed out"),
    "malformed JSON": ({"malformed": True}, "unreadable response"),
    "empty completion": ({"empty": True}, "empty completion"),
    "401": ({"status": 401}, "401 from openai-compatible: check LLM_API_KEY"),
}


async def test_every_provider_fault_is_reported_in_time_and_the_session_carries_on(
    stub: StubLLM, tmp_path: Path
) -> None:
    async with stdio(env_for(tmp_path / "data", stub.base_url)) as client:
        # Warm-up: the first thought waits for agno and the SDK to load in the background.
        warm = await client.call_tool(
            "sequentialthinking",
            {"thought": "warm up", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False,
             "strategy": "single", "sessionId": "warm"},
        )  # fmt: skip
        assert not warm.is_error, text_of(warm)

        for name, (fault, expected) in FAULTS.items():
            session = "fault-" + name.replace(" ", "-")
            stub.reset()
            stub.fault("*", **fault)
            started = time.monotonic()
            failed = await client.call_tool(
                "sequentialthinking",
                {"thought": f"What does {name} do to us?", "thoughtNumber": 1, "totalThoughts": 2,
                 "nextThoughtNeeded": True, "strategy": "single", "sessionId": session},
            )  # fmt: skip
            elapsed = time.monotonic() - started
            attempts = stub.stats()["recent"]

            text = text_of(failed)
            assert failed.is_error, (name, text)
            assert expected in text, (name, text)
            assert "stub fault" not in text and "analysis of:" not in text, (name, text)
            assert elapsed < DEADLINE + 2, (name, elapsed)
            if name == "401":
                assert len(attempts) == 1, "a bad key is not retried"
            if name == "429 with Retry-After":
                gaps = [b["start"] - a["start"] for a, b in itertools.pairwise(attempts)]
                assert len(attempts) == 3 and all(gap >= 0.3 for gap in gaps), gaps

            stub.reset()  # the provider recovers: the next thought of the session works
            after = await client.call_tool(
                "sequentialthinking",
                {"thought": "And now?", "thoughtNumber": 2, "totalThoughts": 2, "nextThoughtNeeded": False,
                 "strategy": "single", "sessionId": session},
            )  # fmt: skip
            assert not after.is_error, (name, text_of(after))
            stored = await client.read_resource(f"thinking://sessions/{session}")
            entries = json.loads(stored.contents[0].text)["entries"]  # type: ignore[union-attr]
            assert [e["number"] for e in entries] == [1, 2], name


async def test_a_failed_synthesis_still_returns_the_hats_over_stdio(stub: StubLLM, tmp_path: Path) -> None:
    stub.fault("synthesis", status=503)
    async with stdio(env_for(tmp_path / "data", stub.base_url)) as client:
        result = await client.call_tool(
            "sequentialthinking",
            {"thought": "Should we ship on Friday, given the risk and the team?", "thoughtNumber": 1,
             "totalThoughts": 1, "nextThoughtNeeded": False, "strategy": "double"},
        )  # fmt: skip
    text = text_of(result)
    assert not result.is_error, text
    assert "synthesis failed: 503 from openai-compatible" in text
    assert text.count("analysis of:") == 2  # both hats' own analyses, each under its name


async def test_a_refused_connection_is_reported_with_the_endpoint_to_check(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    async with stdio(env_for(tmp_path / "data", base_url)) as client:
        started = time.monotonic()
        result = await client.call_tool(
            "sequentialthinking",
            {"thought": "Is anyone there?", "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": True,
             "strategy": "single", "sessionId": "refused"},
        )  # fmt: skip
        elapsed = time.monotonic() - started
        after = await client.call_tool(
            "sequentialthinking",
            {"thought": "Record it anyway.", "thoughtNumber": 2, "totalThoughts": 2, "nextThoughtNeeded": False,
             "strategy": "none", "sessionId": "refused"},
        )  # fmt: skip
    assert result.is_error
    assert "no response from openai-compatible" in text_of(result) and base_url in text_of(result)
    assert elapsed < DEADLINE + 2
    assert not after.is_error


def test_a_misconfigured_provider_is_named_on_stderr_at_start_up(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", LLM_PROVIDER="anthropic")  # and no ANTHROPIC_API_KEY
    with peer(env) as p:
        reply = p.call(
            "sequentialthinking",
            {"thought": "Still works?", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False},
        )
        p.process.terminate()
        _, err = p.process.communicate(timeout=30)
    assert not reply["result"]["isError"]
    assert "ANTHROPIC_API_KEY" in err.decode()
