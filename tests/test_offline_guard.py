"""The test suite cannot reach the network: the guards themselves, shown failing on purpose."""

from __future__ import annotations

import contextlib
import socket

import httpx2
import pytest

import conftest
from fakes import offline_router
from thinking_hats.analysis import ThoughtContext
from thinking_hats.config import Settings
from thinking_hats.hats.orchestrator import Orchestrator
from thinking_hats.hats.prompts import Prompts
from thinking_hats.hats.providers import resolve_provider
from thinking_hats.routing.router import route


async def test_a_model_request_that_no_fake_routes_fails_the_test_even_if_the_code_copes() -> None:
    settings = Settings(llm_provider="openai", openai_api_key="sk-x", thinking_max_retries=0)
    provider = resolve_provider(settings)
    assert provider is not None
    expected = r"unexpected outbound requests: \['POST https://api\.openai\.com"
    with pytest.raises(AssertionError, match=expected), offline_router():
        orchestrator = Orchestrator(settings, provider, Prompts())
        ctx = ThoughtContext("Is 7 prime?", 1, 1)
        outcome = await orchestrator.analyse(ctx, route(ctx, 0.5, "single"), None)
        await orchestrator.aclose()
        assert outcome.failure is not None  # the code coped: the hat failed cleanly ...
    # ... and the guard still fails the test.


async def test_a_request_to_a_host_no_fake_serves_fails_the_test() -> None:
    with pytest.raises(AssertionError, match=r"llm\.elsewhere\.test"), offline_router():
        async with httpx2.AsyncClient() as client:
            with contextlib.suppress(Exception):
                await client.get("https://llm.elsewhere.test/v1/models")


def test_a_socket_to_a_non_loopback_address_is_refused_and_remembered() -> None:
    with socket.socket() as sock, pytest.raises(conftest.UnexpectedNetworkAccess):
        sock.connect(("203.0.113.7", 443))
    assert conftest._attempts  # the autouse guard will fail the test at teardown ...
    conftest._attempts.clear()  # ... so this test, which wanted exactly that, clears it
