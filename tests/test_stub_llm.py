"""The stub model server speaks both wire formats well enough for the official SDKs, and its faults and counters
are what the benchmarks and the provider-fault tests rely on: if the stub lies, those results lie."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from benchmarks.stub_llm import StubLLM, role_of

SYSTEM = "You are the **critical** hat in a small team."
ROLES = ["factual", "emotional", "critical", "optimistic", "creative"]


def chat(role: str = "critical", user: str = "Is it?") -> Any:
    """OpenAI messages whose system prompt names `role` (typed Any: the SDK's TypedDict unions are noise here)."""
    return [{"role": "system", "content": f"You are the **{role}** hat"}, {"role": "user", "content": user}]


@pytest.fixture
async def stub() -> AsyncIterator[StubLLM]:
    async with StubLLM(latency=0.0) as running:
        yield running


@pytest.fixture
async def oai(stub: StubLLM) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(base_url=stub.base_url, api_key="x", max_retries=0) as client:
        yield client


@pytest.fixture
async def claude(stub: StubLLM) -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with anthropic.AsyncAnthropic(base_url=stub.root, api_key="x", max_retries=0) as client:
        yield client


def test_the_role_is_the_first_role_word_of_the_system_prompt() -> None:
    assert role_of("You are the **synthesizer**: merge the factual and critical views") == "synthesis"
    assert role_of("You are the **creative** hat; unlike the critical hat ...") == "creative"
    assert role_of("Be helpful.") == "unknown"


async def test_openai_plain_reply_with_usage_from_every_message(stub: StubLLM, oai: openai.AsyncOpenAI) -> None:
    messages = [*chat(), {"role": "assistant", "content": "Earlier answer."}, {"role": "user", "content": "And now?"}]
    reply = await oai.chat.completions.create(model="m", messages=messages)
    assert reply.choices[0].message.content == "[critical] analysis of: And now?"  # the last user message
    assert reply.choices[0].finish_reason == "stop"
    chars = sum(len(m["content"]) for m in messages)
    assert reply.usage is not None
    assert reply.usage.prompt_tokens == chars // 4
    assert reply.usage.completion_tokens == len("[critical] analysis of: And now?") // 4 + 1
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    assert stub.stats()["prompt_tokens_by_role"] == {"critical": chars // 4}


async def test_openai_streams_with_usage_only_when_asked(stub: StubLLM, oai: openai.AsyncOpenAI) -> None:
    asked = await oai.chat.completions.create(
        model="m", messages=chat(user="x" * 100), stream=True, stream_options={"include_usage": True}
    )
    chunks = [chunk async for chunk in asked]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "[critical] analysis of: " + "x" * 60  # the first 60 characters of the user message
    assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens > 0

    plain = await oai.chat.completions.create(model="m", messages=chat(), stream=True)
    chunks = [chunk async for chunk in plain]
    assert all(c.usage is None for c in chunks) and chunks[-1].choices[0].finish_reason == "stop"
    assert [r["stream"] for r in stub.stats()["recent"]] == [True, True]


async def test_anthropic_plain_and_streamed_replies_parse(stub: StubLLM, claude: anthropic.AsyncAnthropic) -> None:
    reply = await claude.messages.create(
        model="claude-haiku-5-5", max_tokens=50, system=SYSTEM, messages=[{"role": "user", "content": "Why?"}]
    )
    assert reply.content[0].type == "text" and reply.content[0].text == "[critical] analysis of: Why?"
    assert reply.stop_reason == "end_turn" and reply.usage.input_tokens == (len(SYSTEM) + len("Why?")) // 4

    blocks: Any = [{"type": "text", "text": "You are the **synthesizer** of the hats."}]  # system as a list of blocks
    async with claude.messages.stream(
        model="claude-haiku-5-5", max_tokens=50, system=blocks, messages=[{"role": "user", "content": "Why?"}]
    ) as stream:
        assert await stream.get_final_text() == "[synthesis] analysis of: Why?"
        final = await stream.get_final_message()
    assert (
        final.stop_reason == "end_turn" and final.usage.output_tokens == len("[synthesis] analysis of: Why?") // 4 + 1
    )
    assert stub.stats()["by_role"] == {"critical": 1, "synthesis": 1}
    assert {r["path"] for r in stub.stats()["recent"]} == {"/v1/messages"}


async def test_the_model_list_answers_with_and_without_v1(stub: StubLLM, oai: openai.AsyncOpenAI) -> None:
    assert [m.id async for m in oai.models.list()] == ["stub-model"]
    async with httpx2.AsyncClient(base_url=stub.root) as client:
        assert (await client.get("/models")).json()["data"][0]["id"] == "stub-model"
        bare = await client.post("/chat/completions", json={"model": "m", "messages": chat()})
        assert bare.json()["object"] == "chat.completion"


async def test_peak_concurrency_counts_overlapping_requests(stub: StubLLM, oai: openai.AsyncOpenAI) -> None:
    stub.latency = 0.2  # long enough for five concurrent requests to overlap
    await asyncio.gather(*(oai.chat.completions.create(model="m", messages=chat(role)) for role in ROLES))
    stats = stub.stats()
    assert stats["peak_concurrency"] == 5 and stats["in_flight"] == 0
    assert stats["by_role"] == dict.fromkeys(ROLES, 1) and stats["peak_by_role"] == dict.fromkeys(ROLES, 1)
    assert all(r["start"] < r["end"] for r in stats["recent"])
    stub.reset()
    assert stub.stats()["requests"] == 0 and stub.stats()["peak_concurrency"] == 0


async def test_a_fault_with_retry_after_applies_for_its_count_then_clears(
    stub: StubLLM, oai: openai.AsyncOpenAI
) -> None:
    stub.fault("critical", status=429, retry_after=1, times=1)
    assert (await oai.chat.completions.create(model="m", messages=chat("factual"))).choices[0].message.content
    with pytest.raises(openai.RateLimitError) as raised:
        await oai.chat.completions.create(model="m", messages=chat("critical"))
    assert raised.value.response.headers["retry-after"] == "1"
    assert raised.value.code == "rate_limit_exceeded"
    ok = await oai.chat.completions.create(model="m", messages=chat("critical"))
    assert ok.choices[0].message.content == "[critical] analysis of: Is it?"
    assert [r["status"] for r in stub.stats()["recent"]] == [200, 429, 200]


async def test_error_bodies_are_in_each_vendors_shape(
    stub: StubLLM, oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic
) -> None:
    stub.fault("*", status=401)
    with pytest.raises(anthropic.AuthenticationError) as raised:
        await claude.messages.create(
            model="m", max_tokens=5, system=SYSTEM, messages=[{"role": "user", "content": "x"}]
        )
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "stub fault: HTTP 401"},
    }
    with pytest.raises(openai.AuthenticationError) as denied:
        await oai.chat.completions.create(model="m", messages=chat())
    assert denied.value.code == "invalid_api_key"


async def test_malformed_and_empty_answers(
    stub: StubLLM, oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic
) -> None:
    stub.fault("*", malformed=True, times=2)
    with pytest.raises((openai.APIError, ValueError)):  # the SDK lets the JSON error through
        await oai.chat.completions.create(model="m", messages=chat())
    with pytest.raises((anthropic.APIError, ValueError)):
        await claude.messages.create(
            model="m", max_tokens=5, system=SYSTEM, messages=[{"role": "user", "content": "x"}]
        )
    stub.fault("critical", empty=True, times=1)
    empty = await oai.chat.completions.create(model="m", messages=chat())
    assert empty.choices[0].message.content == ""
    assert (await oai.chat.completions.create(model="m", messages=chat())).choices[0].message.content


async def test_a_delay_fault_outlasts_the_client_without_holding_up_stop() -> None:
    stub = await StubLLM(latency=0.0).start()
    stub.fault("*", delay=30)
    async with openai.AsyncOpenAI(base_url=stub.base_url, api_key="x", max_retries=0, timeout=0.3) as client:
        with pytest.raises(openai.APITimeoutError):
            await client.chat.completions.create(model="m", messages=chat())
    await asyncio.wait_for(stub.stop(), timeout=10)  # woken, not after the 30 s
    assert stub.stats()["requests"] == 1 and stub.stats()["in_flight"] == 0


async def test_other_processes_steer_it_over_http(stub: StubLLM, oai: openai.AsyncOpenAI) -> None:
    async with httpx2.AsyncClient(base_url=stub.root) as control:
        assert (await control.post("/_control/fault", json={"role": "factual", "status": 503, "times": 1})).is_success
        assert (await control.post("/_control/fault", json={"role": "factual", "bogus": 1})).status_code == 400
        with pytest.raises(openai.InternalServerError):
            await oai.chat.completions.create(model="m", messages=chat("factual"))
        await oai.chat.completions.create(model="m", messages=chat("factual"))
        stats = (await control.get("/_control/stats")).json()
        assert stats["by_role"] == {"factual": 2} and [r["status"] for r in stats["recent"]] == [503, 200]
        assert (await control.post("/_control/latency", json={"role": "critical", "latency": 0.05})).is_success
        assert stub.role_latency == {"critical": 0.05}
        await control.post("/_control/reset")
        assert (await control.get("/_control/stats")).json()["requests"] == 0


def test_in_a_thread_it_serves_synchronous_clients() -> None:
    with StubLLM.in_thread(latency=0.0) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="x", max_retries=0)
        assert client.chat.completions.create(model="m", messages=chat("emotional")).choices[0].message.content
        client.close()
        assert stub.stats()["by_role"] == {"emotional": 1}


def test_the_command_line_prints_its_base_url_and_serves_until_killed() -> None:
    script = Path(__file__).parents[1] / "benchmarks" / "stub_llm.py"
    proc = subprocess.Popen([sys.executable, str(script), "--latency", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        assert httpx2.get(f"{base_url}/models").json()["object"] == "list"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
