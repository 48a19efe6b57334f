"""The stub model server speaks both wire formats well enough for the official SDKs, and its faults and counters
are what the benchmarks and the fault tests rely on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import anthropic
import httpx2
import openai
import pytest
from benchmarks.stub_llm import StubLLM, role_of

SYSTEM = "You are the **critical** hat in a small team."


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


async def test_openai_plain_and_streamed_replies_parse_with_usage(stub: StubLLM, oai: openai.AsyncOpenAI) -> None:
    messages: list[dict[str, str]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Is it?"}]
    plain = await oai.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    assert plain.choices[0].message.content == "[critical] analysis of: Is it?"
    assert plain.usage is not None and plain.usage.prompt_tokens > 0

    stream = await oai.chat.completions.create(
        model="m",
        messages=messages,  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "[critical] analysis of: Is it?"
    assert chunks[-1].usage is not None
    assert stub.stats()["by_role"] == {"critical": 2}


async def test_anthropic_plain_and_streamed_replies_parse(stub: StubLLM, claude: anthropic.AsyncAnthropic) -> None:
    reply = await claude.messages.create(
        model="claude-haiku-5-5", max_tokens=50, system=SYSTEM, messages=[{"role": "user", "content": "Why?"}]
    )
    assert reply.content[0].text == "[critical] analysis of: Why?"  # type: ignore[union-attr]
    assert reply.usage.input_tokens > 0

    async with claude.messages.stream(
        model="claude-haiku-5-5", max_tokens=50, system=SYSTEM, messages=[{"role": "user", "content": "Why?"}]
    ) as stream:
        assert await stream.get_final_text() == "[critical] analysis of: Why?"


async def test_peak_concurrency_counts_overlapping_requests(stub: StubLLM, oai: openai.AsyncOpenAI) -> None:
    stub.latency = 0.2  # long enough for five concurrent requests to overlap
    roles = ["factual", "emotional", "critical", "optimistic", "creative"]
    await asyncio.gather(
        *(
            oai.chat.completions.create(
                model="m",
                messages=[{"role": "system", "content": f"You are the **{r}** hat"}, {"role": "user", "content": "x"}],
            )
            for r in roles
        )
    )
    stats = stub.stats()
    assert stats["peak_concurrency"] == 5
    assert stats["by_role"] == dict.fromkeys(roles, 1)


async def test_a_fault_with_retry_after_applies_for_its_count_then_clears(
    stub: StubLLM, oai: openai.AsyncOpenAI
) -> None:
    stub.fault("critical", status=429, retry_after="7", times=1)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "x"}]
    with pytest.raises(openai.RateLimitError) as raised:
        await oai.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    assert raised.value.response.headers["retry-after"] == "7"
    ok = await oai.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    assert ok.choices[0].message.content


async def test_malformed_and_empty_answers(stub: StubLLM, oai: openai.AsyncOpenAI) -> None:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "x"}]
    stub.fault("*", malformed=True, times=1)
    with pytest.raises((openai.APIError, ValueError)):  # the SDK lets the JSON error through
        await oai.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    stub.fault("*", empty=True, times=1)
    empty = await oai.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    assert empty.choices[0].message.content == ""


async def test_other_processes_steer_it_over_http(stub: StubLLM, oai: openai.AsyncOpenAI) -> None:
    async with httpx2.AsyncClient(base_url=stub.root) as control:
        await control.post("/_control/fault", json={"role": "factual", "status": 503, "times": 1})
        with pytest.raises(openai.InternalServerError):
            await oai.chat.completions.create(
                model="m",
                messages=[
                    {"role": "system", "content": "You are the **factual** hat"},
                    {"role": "user", "content": "x"},
                ],
            )
        stats = (await control.get("/_control/stats")).json()
        assert stats["by_role"] == {"factual": 1} and stats["recent"][0]["status"] == 503
        await control.post("/_control/reset")
        assert (await control.get("/_control/stats")).json()["requests"] == 0
