"""Every URL we print or export is masked: a password or key planted in LLM_BASE_URL (`user:pass@`, `?api-key=`,
`?token=`), in the OTLP endpoint and in a THINKING_STORE URL (a malformed one included) shows on no surface:
tool replies, logs, `doctor`, `usage`, `/healthz`, `/metrics`, trace attributes."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx2
import pytest
from mcp import Client

from calls import text_of
from http_peer import http_server
from stdio_peer import server_env
from test_gate import tool_call
from test_traces import Receiver, receiver  # noqa: F401  (a fixture)
from thinking_hats.cli.doctor import run_doctor
from thinking_hats.cli.main import main
from thinking_hats.config import Settings
from thinking_hats.ops.logs import setup_logging
from thinking_hats.ops.redaction import MASK, passwords_in, redact_url
from thinking_hats.server import build_server

USER_PW = "llm-Pw-planted-4242"
API_KEY = "llm-ApiKey-planted-1717"
QUERY_TOKEN = "llm-QueryTok-planted-2323"
OTLP_PW = "otlp-Pw-planted-9191"
STORE_PW = "store-Pw-planted-[5555"
PLANTED = [USER_PW, API_KEY, QUERY_TOKEN, OTLP_PW, STORE_PW]
# Port 9 (discard) on loopback: nothing listens, so every model call fails and its error names the endpoint.
LLM_URL = f"http://hats:{USER_PW}@127.0.0.1:9/v1?api-key={API_KEY}&token={QUERY_TOKEN}"
ALICE = "alice-token-0a1b2c3d4e5f"


def assert_clean(text: str, where: str) -> None:
    for secret in PLANTED:
        assert secret not in text, f"{where} shows {secret!r}: {text[:2000]}"


@pytest.mark.parametrize(
    ("url", "secrets"),
    [
        (LLM_URL, [USER_PW, API_KEY, QUERY_TOKEN]),
        ("https://gw.example/v1?key=k-1234567&x=1", ["k-1234567"]),
        (f"postgresql://app:{STORE_PW}@127.0.0.1:5432/db", [STORE_PW]),  # '[' makes urllib refuse it
        (f"postgresql://app:{STORE_PW}@[::1/db", [STORE_PW]),  # and an unclosed bracket, libpq too
        ("postgresql://app:pw-123456@127.0.0.1:notaport/db", ["pw-123456"]),
    ],
)
def test_every_secret_of_a_url_is_found_and_masked_even_when_the_url_is_malformed(url: str, secrets: list[str]) -> None:
    found = passwords_in(url)
    shown = redact_url(url)
    for secret in secrets:
        assert secret in found and secret not in shown
    assert MASK in shown and "://" in shown


async def test_secrets_planted_in_every_url_setting_show_in_no_reply_log_doctor_or_trace(
    receiver: Receiver,  # noqa: F811
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    collector = receiver.url.replace("http://", f"http://otlp:{OTLP_PW}@")
    settings = Settings(
        llm_provider="openai-compatible", llm_base_url=LLM_URL, llm_model="stub-model",
        otel_exporter_otlp_endpoint=collector, thinking_data_dir=tmp_path, thinking_retry_wait=0.01,
        thinking_log_level="DEBUG", disable_thought_logging=False,
    )  # type: ignore[call-arg]  # fmt: skip
    setup_logging(settings)
    try:
        thought = {"thought": "Which of the two rollout plans fails more safely?", "thoughtNumber": 1,
                   "totalThoughts": 2, "nextThoughtNeeded": True, "strategy": "double"}  # fmt: skip
        async with Client(build_server(settings)) as client:
            reply = await client.call_tool("sequentialthinking", thought)
        logging.getLogger("thinking_hats").info("endpoint in a message: %s", LLM_URL)  # a careless log line
        assert await run_doctor(settings) == 1  # the endpoint does not answer
    finally:
        logging.getLogger().handlers.clear()
    out, err = capfd.readouterr()

    said = text_of(reply) + json.dumps(reply.structured_content)
    assert "127.0.0.1:9" in said  # the error names the endpoint, masked
    assert "127.0.0.1:9" in out and MASK in out  # doctor shows LLM_BASE_URL, masked
    assert receiver.spans
    addresses = {s.attributes.get("server.address") for s in receiver.spans} - {None}
    assert addresses and all(MASK in a for a in addresses)
    for where, text in {"the tool reply": said, "doctor": out, "the log": err,
                        "trace attributes": repr([s.attributes for s in receiver.spans]),
                        "the exported spans": b"".join(receiver.raw).decode("latin-1")}.items():  # fmt: skip
        assert_clean(text, where)


@pytest.mark.parametrize("url", [f"postgresql://app:{STORE_PW}@127.0.0.1:9/db", f"postgresql://app:{STORE_PW}@[::1/db"])
def test_a_store_url_malformed_or_unreachable_shows_no_password_in_usage_or_doctor(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("THINKING_STORE", url)
    monkeypatch.setenv("THINKING_DATA_DIR", str(tmp_path))
    assert main(["usage"]) == 2
    assert main(["doctor"]) == 1
    out, err = capfd.readouterr()
    assert "Traceback" not in err and "THINKING_STORE" in err + out
    assert_clean(out + err, "usage and doctor")


@pytest.mark.slow
def test_secrets_in_llm_base_url_show_in_no_http_reply_healthz_metrics_or_server_log(tmp_path: Path) -> None:
    (tmp_path / "tokens").write_text(f"alice {ALICE} operator\n")
    env = server_env(tmp_path / "data", LLM_PROVIDER="openai-compatible", LLM_BASE_URL=LLM_URL,
                     LLM_MODEL="stub-model", THINKING_RETRY_WAIT="0.01", THINKING_LOG_LEVEL="DEBUG",
                     THINKING_HTTP_TOKENS_FILE=str(tmp_path / "tokens"), AGNO_TELEMETRY="false")  # fmt: skip
    with http_server(env) as server, httpx2.Client(timeout=60) as http:
        result = tool_call(server.url, ALICE, {"thought": "Which rollout fails more safely?", "thoughtNumber": 1,
                                               "totalThoughts": 2, "nextThoughtNeeded": True}, http)  # fmt: skip
        base = server.url.removesuffix("/mcp")
        health = http.get(f"{base}/healthz")
        metrics = http.get(f"{base}/metrics", headers={"authorization": f"Bearer {ALICE}"})
    assert health.status_code == 200 and metrics.status_code == 200
    log = "".join(server.stderr)
    assert "127.0.0.1:9" in json.dumps(result)  # the failure names the endpoint, masked
    for where, text in {"the reply": json.dumps(result), "/healthz": health.text, "/metrics": metrics.text,
                        "the server's log": log}.items():  # fmt: skip
        assert_clean(text, where)
