"""`GET /metrics`: Prometheus text, read by prometheus-client's own parser, multiprocess-correct under `--workers 2`
(whichever worker answers, the totals are the same and cover both), behind the bearer tokens unless opened."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from benchmarks.stub_llm import StubLLM
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families

from budget import worst_case
from http_peer import http_server
from stdio_peer import server_env
from thinking_hats.config import Settings
from thinking_hats.ops.metrics import METRICS, PREFIX

pytestmark = pytest.mark.slow

ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789ab"
TOOL = "sequentialthinking"


@asynccontextmanager
async def client_of(url: str, token: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,  # type: ignore[arg-type]
    ):
        yield client


def scrape(base: str, token: str | None) -> httpx2.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    # A new connection each time: the kernel spreads them over the workers.
    return httpx2.get(f"{base}/metrics", headers=headers | {"connection": "close"}, timeout=30)


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the exposition, by name and labels, as prometheus-client's parser reads it."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def total(found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    want = set(labels.items())
    return sum(v for (n, ls), v in found.items() if n == name and want <= set(ls))


def thought(session: str, number: int, **extra: Any) -> dict[str, Any]:
    return {"thought": f"{session}: what would make step {number} fail?", "thoughtNumber": number,
            "totalThoughts": 3, "nextThoughtNeeded": True, "sessionId": session, "strategy": "single",
            **extra}  # fmt: skip


async def test_metrics_count_both_workers_the_same_whichever_answers_and_only_an_operator_reads_them(
    tmp_path: Path,
) -> None:
    (tmp_path / "tokens").write_text(f"alice {ALICE} operator\nbob {BOB}\n")
    (tmp_path / "tmp").mkdir()
    async with StubLLM(latency=0.01) as stub:
        # Room for one thought's worst case: a day, not a minute, so no boundary mid-test.
        one = Settings(llm_provider="openai-compatible", llm_base_url=stub.base_url, llm_model="stub-model")
        (tmp_path / "limits").write_text(f"bob tokens_per_day={await worst_case(one, thought('b0', 1)['thought'])}\n")
        env = server_env(tmp_path / "data", LLM_PROVIDER="openai-compatible", LLM_BASE_URL=stub.base_url,
                         LLM_MODEL="stub-model", AGNO_TELEMETRY="false",
                         THINKING_HTTP_TOKENS_FILE=str(tmp_path / "tokens"),
                         THINKING_PRINCIPAL_LIMITS_FILE=str(tmp_path / "limits"),
                         TMPDIR=str(tmp_path / "tmp"))  # fmt: skip
        with http_server(env, "--workers", "2") as server:
            base = server.url.rsplit("/mcp", 1)[0]
            # Many short connections: thoughts land on both workers.
            for n in range(12):
                async with client_of(server.url, ALICE) as alice:
                    await alice.call_tool(TOOL, thought(f"a{n}", 1))
            for n in range(3):  # bob's first thought spends his day's token, the others are over it
                async with client_of(server.url, BOB) as bob:
                    await bob.call_tool(TOOL, thought(f"b{n}", 1))
            async with client_of(server.url, ALICE) as alice:
                await alice.call_tool("crash", {"step_number": 1, "estimated_total": 1, "purpose": "analysis",
                                                "context": "c", "thought": "t", "outcome": "o",
                                                "next_action": "n", "rationale": "To r"})  # fmt: skip
            refused = scrape(base, None)
            wrong = scrape(base, "not-a-token-at-all-0000")
            tenant = scrape(base, BOB)  # a tenant must not read what every principal spent
            answers = [scrape(base, ALICE) for _ in range(8)]
            # Each worker writes its own files (named by its pid) in the run's directory.
            writers = {p.stem.rsplit("_", 1)[1] for p in (tmp_path / "tmp").glob("thinking-hats-metrics-*/counter_*")}
        leftovers = list((tmp_path / "tmp").iterdir())

    assert refused.status_code == 401 and wrong.status_code == 401
    assert tenant.status_code == 403 and "operator" in tenant.json()["error"] and "alice" not in tenant.text
    assert all(r.status_code == 200 for r in answers)
    assert answers[0].headers["content-type"].startswith("text/plain; version=0.0.4")
    parsed = [samples(r.text) for r in answers]
    first = parsed[0]
    thoughts = f"{PREFIX}_thoughts_total"
    assert total(first, thoughts, tool=TOOL) == 15
    assert total(first, thoughts, tool=TOOL, mode="augmented", strategy="single") == 13
    assert total(first, thoughts, tool=TOOL, mode="refused") == 2
    assert total(first, thoughts, tool="crash", mode="record-only") == 1
    assert total(first, f"{PREFIX}_model_calls_total", provider="openai-compatible", outcome="ok") == 13
    assert total(first, f"{PREFIX}_model_call_seconds_count", provider="openai-compatible") == 13
    assert total(first, f"{PREFIX}_thought_seconds_count", tool=TOOL) == 15
    assert total(first, f"{PREFIX}_tokens_total", principal="alice", kind="input") > 0
    assert total(first, f"{PREFIX}_tokens_total", principal="bob", kind="output") > 0
    assert total(first, f"{PREFIX}_limit_refusals_total", principal="bob",
                 limit="THINKING_PRINCIPAL_TOKENS_PER_DAY") == 2  # fmt: skip
    assert total(first, f"{PREFIX}_store_transaction_seconds_count", backend="sqlite", operation="commit") == 16
    assert total(first, f"{PREFIX}_store_errors_total") == 0
    assert total(first, f"{PREFIX}_sessions_started_total", tool=TOOL) == 15
    # Whichever worker answered, the same totals: the exposition adds up both workers' files.
    for other in parsed[1:]:
        assert total(other, thoughts) == 16 and total(other, f"{PREFIX}_tokens_total") == total(
            first, f"{PREFIX}_tokens_total"
        )
    assert len(writers) == 2, "thoughts landed on both workers"
    assert leftovers == [], "the run's metrics directory is removed at exit"
    exposed = {f.name for f in text_string_to_metric_families(answers[0].text)}
    documented = {f"{PREFIX}_{name}" for name in METRICS}
    assert exposed <= documented  # nothing undocumented
    assert documented - exposed == {f"{PREFIX}_store_errors"}  # a labelled counter shows once it has a sample


async def test_metrics_can_be_opened_to_a_scraper_without_a_token(tmp_path: Path) -> None:
    (tmp_path / "tokens").write_text(f"alice {ALICE}\n")
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(tmp_path / "tokens"),
                     THINKING_METRICS_PUBLIC="true")  # fmt: skip
    with http_server(env) as server:
        base = server.url.rsplit("/mcp", 1)[0]
        opened = await asyncio.to_thread(scrape, base, None)
        mcp_refused = httpx2.post(server.url, json={}, timeout=30)
    assert opened.status_code == 200 and "thinking_hats_thoughts" in opened.text
    assert mcp_refused.status_code == 401  # only /metrics is opened


async def test_a_scrape_token_reads_metrics_and_nothing_else(tmp_path: Path) -> None:
    scraper = "scrape-token-5e6f7a8b9c0d"
    (tmp_path / "tokens").write_text(f"alice {ALICE}\n")
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(tmp_path / "tokens"),
                     THINKING_METRICS_TOKEN=scraper)  # fmt: skip
    with http_server(env) as server:
        base = server.url.rsplit("/mcp", 1)[0]
        scraped = await asyncio.to_thread(scrape, base, scraper)
        tenant = await asyncio.to_thread(scrape, base, ALICE)
        mcp = httpx2.post(server.url, json={}, headers={"authorization": f"Bearer {scraper}"}, timeout=30)
    assert scraped.status_code == 200 and "thinking_hats_thoughts" in scraped.text
    assert tenant.status_code == 403
    assert mcp.status_code == 401  # the scrape token is no principal


async def test_metrics_can_be_turned_off(tmp_path: Path) -> None:
    with http_server(server_env(tmp_path / "data", THINKING_METRICS="false")) as server:
        base = server.url.rsplit("/mcp", 1)[0]
        answer = await asyncio.to_thread(scrape, base, None)
    assert answer.status_code == 404


async def test_a_failed_store_transaction_is_counted_as_a_store_error_and_timed() -> None:
    from thinking_hats.errors import StoreError
    from thinking_hats.ops import metrics
    from thinking_hats.store import open_store

    recorder = metrics.PrometheusMetrics()
    metrics.install(recorder)
    try:
        store = await open_store(None, None)
        await store.ping()
        await store.close()  # every transaction now fails in the database driver
        with pytest.raises(StoreError):
            await store.ping()
        found = samples(recorder.exposition()[0].decode())
    finally:
        metrics.install(None)
    assert total(found, f"{PREFIX}_store_errors_total", backend="sqlite", operation="ping") == 1
    assert total(found, f"{PREFIX}_store_transaction_seconds_count", backend="sqlite", operation="ping") == 2
