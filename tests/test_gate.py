"""Authentication never switches off by accident, tokens rotate without a restart, and the gate's smaller rules:
a browser behind a TLS proxy is let in, a legacy session idle past its timeout is served statelessly."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest

from budget import worst_case
from http_peer import INITIALIZE, MCP_HEADERS, http_server, post
from stdio_peer import server_env
from thinking_hats.config import Settings
from thinking_hats.errors import ConfigurationError
from thinking_hats.serving.gate import Principals

ALICE = "alice-token-0a1b2c3d4e5f"
BOB = "bob-token-9f8e7d6c5b4a"
MODERN = "2026-07-28"


def refused(tmp_path: Path, content: bytes, **settings: object) -> str:
    path = tmp_path / "tokens"
    path.write_bytes(content)
    with pytest.raises(ConfigurationError) as raised:
        Principals.from_settings(Settings(thinking_http_tokens_file=path, **settings))  # type: ignore[arg-type]
    return str(raised.value)


def test_the_reserved_name_local_is_refused_in_a_tokens_file(tmp_path: Path) -> None:
    message = refused(tmp_path, f"alice {ALICE}\nlocal {BOB}\n".encode())
    assert "line 2" in message and "'local' is reserved" in message and BOB not in message


def test_a_tokens_file_that_lists_nobody_is_refused_rather_than_letting_everyone_in_as_local(tmp_path: Path) -> None:
    message = refused(tmp_path, b"# all tokens revoked\n\n")
    assert "lists no principals" in message


def test_a_tokens_file_that_is_not_utf8_is_refused_with_the_fix(tmp_path: Path) -> None:
    message = refused(tmp_path, f"alice {ALICE}\nb\xf6b {BOB}\n".encode("latin-1"))
    assert "not UTF-8" in message


def test_a_short_thinking_http_token_is_refused_off_loopback_and_accepted_on_it() -> None:
    settings = Settings(thinking_http_token="a")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError) as raised:
        Principals.from_settings(settings, loopback=False)
    assert "shorter than 16" in str(raised.value)
    assert Principals.from_settings(settings, loopback=True).who(b"Bearer a") == "default"


def test_serving_beyond_loopback_with_a_short_token_is_a_start_up_error_without_a_traceback(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "thinking_hats",
        "serve",
        "--transport",
        "http",
        "--host",
        "0.0.0.0",
        "--port",
        "0",
    ]
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKEN="a")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "THINKING_HTTP_TOKEN is shorter than 16" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_tokens_file_is_a_start_up_error_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "tokens").write_bytes(b"# all tokens revoked\n")
    command = [sys.executable, "-m", "thinking_hats", "serve", "--transport", "http", "--port", "0"]
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(tmp_path / "tokens"))
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "lists no principals" in done.stderr and "Traceback" not in done.stderr


def status_of(url: str, token: str) -> int:
    # A new connection each time: the kernel spreads them over the workers (SO_REUSEPORT).
    with httpx2.Client(timeout=30) as http:
        return http.post(url, json=INITIALIZE, headers=MCP_HEADERS | {"authorization": f"Bearer {token}"}).status_code


@pytest.mark.slow
def test_a_token_revoked_in_the_file_is_refused_by_every_worker_after_sighup(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice {ALICE}\nbob {BOB}\n")
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(tokens))
    with http_server(env, "--workers", "2") as server:
        before = [status_of(server.url, BOB) for _ in range(10)]
        tokens.write_text(f"alice {ALICE}\n# bob revoked\n")
        server.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 30
        while sum("tokens reloaded" in line for line in server.stderr) < 2:  # one line per worker
            assert time.monotonic() < deadline, "".join(server.stderr)
            time.sleep(0.02)  # polling the server's log: there is no event to wait on
        after = [status_of(server.url, BOB) for _ in range(20)]
        alice = [status_of(server.url, ALICE) for _ in range(6)]
        alive = server.process.poll() is None

    assert before == [200] * 10
    assert after == [401] * 20  # both workers refuse the revoked token, without a restart
    assert alice == [200] * 6 and alive


def test_a_browser_origin_over_https_on_the_default_port_is_accepted_for_an_allowed_host(tmp_path: Path) -> None:
    # TLS ends at a proxy in front of the server: the browser sends Origin https://team.example.com (no port).
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKEN=ALICE, THINKING_HTTP_ALLOWED_HOSTS="team.example.com")
    with http_server(env, "--host", "0.0.0.0") as server:
        url = f"http://127.0.0.1:{server.port}/mcp"
        headers = {"authorization": f"Bearer {ALICE}", "host": "team.example.com"}
        secure = post(url, INITIALIZE, origin="https://team.example.com", **headers)
        foreign = post(url, INITIALIZE, origin="https://evil.example.com", **headers)
    assert secure.status_code == 200, secure.text
    assert foreign.status_code == 403


def test_a_legacy_session_idle_past_the_timeout_is_answered_statelessly_not_404(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", THINKING_HTTP_IDLE_TIMEOUT="1", THINKING_LOG_LEVEL="INFO")
    with http_server(env) as server:
        opened = post(server.url, INITIALIZE)
        session = opened.headers["mcp-session-id"]
        headers = {"mcp-session-id": session}
        post(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **headers)
        deadline = time.monotonic() + 30
        while not any("idle timeout" in line for line in server.stderr):  # the SDK closed the session
            assert time.monotonic() < deadline, "".join(server.stderr)
            time.sleep(0.02)  # polling the server's log: there is no event to wait on
        listed = post(server.url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, **headers)
    assert opened.status_code == 200
    assert listed.status_code == 200, listed.text
    assert "sequentialthinking" in listed.text


def test_sighup_before_any_worker_handles_it_is_not_fatal_to_a_single_process_server(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice {ALICE}\n")
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(tokens))
    with http_server(env) as server:
        tokens.write_text(f"bob {BOB}\n")
        os.kill(server.process.pid, signal.SIGHUP)
        deadline = time.monotonic() + 30
        while not any("tokens reloaded" in line for line in server.stderr):
            assert time.monotonic() < deadline, "".join(server.stderr)
            time.sleep(0.02)  # polling the server's log: there is no event to wait on
        statuses = (status_of(server.url, ALICE), status_of(server.url, BOB))
    assert statuses == (401, 200)


def tool_call(url: str, token: str, arguments: dict[str, object], http: httpx2.Client) -> dict[str, object]:
    """One stateless (2026-07-28) sequentialthinking call; its JSON-RPC result."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "sequentialthinking", "arguments": arguments, "_meta": meta}}  # fmt: skip
    headers = MCP_HEADERS | {"authorization": f"Bearer {token}", "mcp-protocol-version": MODERN,
                             "mcp-method": "tools/call", "mcp-name": "sequentialthinking"}  # fmt: skip
    response = http.post(url, json=body, headers=headers)
    assert response.status_code == 200, response.text
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:") and '"result"' in line)
    import json

    result: dict[str, object] = json.loads(text)["result"]
    return result


@pytest.mark.slow
def test_another_principals_flood_of_stateless_calls_never_evicts_a_session(tmp_path: Path) -> None:
    # The red team's numbers: a small cap, no grace, 200 stateless calls from bob (each a new session).
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice {ALICE}\nbob {BOB}\n")
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(tokens), THINKING_MAX_SESSIONS="5",
                     THINKING_SESSION_GRACE_MINUTES="0")  # fmt: skip
    step = {"thought": "Weigh the options.", "totalThoughts": 3, "nextThoughtNeeded": True}
    with http_server(env) as server, httpx2.Client(timeout=30) as http:
        first = tool_call(server.url, ALICE, step | {"thoughtNumber": 1, "sessionId": "alice-work"}, http)
        for _ in range(200):
            tool_call(server.url, BOB, step | {"thoughtNumber": 1}, http)
        second = tool_call(server.url, ALICE, step | {"thoughtNumber": 2, "sessionId": "alice-work"}, http)

    assert not first.get("isError") and not second.get("isError"), second
    assert second["structuredContent"]["thoughtHistoryLength"] == 2  # type: ignore[index]


async def test_sighup_re_reads_the_limits_file_too_and_the_next_thought_is_checked_against_it(tmp_path: Path) -> None:
    from benchmarks.stub_llm import StubLLM

    tokens, limits = tmp_path / "tokens", tmp_path / "limits"
    tokens.write_text(f"alice {ALICE}\n")
    step = {"totalThoughts": 3, "nextThoughtNeeded": True, "sessionId": "plan", "strategy": "single"}

    async with StubLLM(latency=0.0) as stub:
        # Room for the first thought's worst case (limits are caps: a thought reserves it before its first call).
        one = Settings(llm_provider="openai-compatible", llm_base_url=stub.base_url, llm_model="stub-model")
        allowed = await worst_case(one, "Which fix first?")
        limits.write_text(f"alice tokens_per_day={allowed}\n")
        env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(tokens),
                         THINKING_PRINCIPAL_LIMITS_FILE=str(limits), LLM_PROVIDER="openai-compatible",
                         LLM_BASE_URL=stub.base_url, LLM_MODEL="stub-model")  # fmt: skip

        def serve() -> list[dict[str, object]]:
            with http_server(env) as server, httpx2.Client(timeout=30) as http:
                replies = [tool_call(server.url, ALICE, step | {"thought": text, "thoughtNumber": n}, http)
                           for n, text in ((1, "Which fix first?"), (2, "And the rollback?"))]  # fmt: skip
                limits.write_text("alice tokens_per_day=none\n")
                os.kill(server.process.pid, signal.SIGHUP)
                deadline = time.monotonic() + 30
                while not any("limits reloaded" in line for line in server.stderr):
                    assert time.monotonic() < deadline, "".join(server.stderr)
                    time.sleep(0.02)  # polling the server's log: there is no event to wait on
                replies.append(tool_call(server.url, ALICE, step | {"thought": "Go?", "thoughtNumber": 3}, http))
            return replies

        first, refused, lifted = [r["structuredContent"] for r in await asyncio.to_thread(serve)]

    assert first["limitReached"] is None and first["usage"]["llmCalls"] == 1  # type: ignore[index]
    assert refused["limitReached"]["allowed"] == allowed  # type: ignore[index]
    assert lifted["limitReached"] is None and lifted["usage"]["llmCalls"] == 1  # type: ignore[index]
