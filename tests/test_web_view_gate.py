"""The web view's share of the gate: operators in the tokens file, the sign-in cookie's rules, and what the view
costs a server that has it off (nothing: not even an import)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest

from thinking_hats.config import Settings
from thinking_hats.errors import ConfigurationError
from thinking_hats.serving.gate import Principals

ALICE = "alice-token-7f3a9c2e1b5d"
BOB = "bob-token-4d8e6f0a2c9e1f"


def principals(tmp_path: Path, text: str) -> Principals:
    path = tmp_path / "tokens"
    path.write_text(text)
    return Principals.from_settings(Settings(thinking_http_tokens_file=path))


def test_an_operator_is_marked_by_a_third_word_operator_in_the_tokens_file(tmp_path: Path) -> None:
    found = principals(tmp_path, f"alice {ALICE} operator\nbob {BOB}\n")
    assert found.operators == frozenset({"alice"})
    assert found.who(f"Bearer {ALICE}".encode()) == "alice" and found.who(f"Bearer {BOB}".encode()) == "bob"


def test_a_third_word_other_than_operator_is_refused_with_its_line(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigurationError, match=r"line 2: the third word after 'bob' and its token may only be 'operator'"
    ):
        principals(tmp_path, f"alice {ALICE}\nbob {BOB} admin\n")


def test_a_cookie_verifies_only_for_its_principal_while_its_token_is_in_force_and_before_it_expires(
    tmp_path: Path,
) -> None:
    from thinking_hats.serving.ui import cookie_principal, sign_cookie

    now = time.time()
    both = principals(tmp_path, f"alice {ALICE}\nbob {BOB}\n")
    cookie = sign_cookie("alice", ALICE.encode(), int(now) + 60)
    assert cookie_principal(cookie, both, now) == "alice"
    assert cookie_principal(cookie, both, now + 61) is None  # expired
    name, expires, mac = cookie.split(".")
    assert cookie_principal(f"{name}.{int(expires) + 3600}.{mac}", both, now) is None  # a longer life, forged
    bob_name = sign_cookie("bob", BOB.encode(), int(now) + 60).split(".")[0]
    assert cookie_principal(f"{bob_name}.{expires}.{mac}", both, now) is None  # another principal's name
    assert cookie_principal("not a cookie", both, now) is None
    revoked = principals(tmp_path, f"bob {BOB}\n")
    assert cookie_principal(cookie, revoked, now) is None  # the token removed (SIGHUP)
    rotated = principals(tmp_path, f"alice {ALICE}-rotated\nbob {BOB}\n")
    assert cookie_principal(cookie, rotated, now) is None  # the token replaced


def loaded_modules(tmp_path: Path, ui: bool) -> dict[str, object]:
    """What building the HTTP app and answering one request imports, in a fresh interpreter."""
    script = f"""
import asyncio, json, sys
from thinking_hats.config import Settings
from thinking_hats.serving.transport import http_app

app = http_app(Settings(thinking_ui={ui}, thinking_metrics=False), "127.0.0.1")
sent = []

async def main():
    async def receive():
        return {{"type": "http.request", "body": b"", "more_body": False}}
    async def send(message):
        sent.append(message)
    scope = {{"type": "http", "method": "GET", "path": "/ui/static/ui.css", "headers": [(b"host", b"127.0.0.1")],
             "query_string": b""}}
    await app(scope, receive, send)

asyncio.run(main())
print(json.dumps({{"status": sent[0]["status"],
                  "modules": sorted(m for m in sys.modules if m.startswith(("jinja2", "thinking_hats.serving.ui",
                                                                             "thinking_hats.tools.chain")))}}))
"""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "THINKING_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_with_the_view_off_the_server_imports_neither_the_view_nor_jinja2(tmp_path: Path) -> None:
    off = loaded_modules(tmp_path, ui=False)
    assert off == {"status": 404, "modules": []}  # /ui/ is not served: the MCP app's own 404
    on = loaded_modules(tmp_path, ui=True)
    assert on["status"] == 200
    assert {"jinja2", "thinking_hats.serving.ui"} <= set(on["modules"])  # type: ignore[call-overload]


async def record(url: str, token: str, session: str) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    arguments = {
        "thought": "t",
        "thoughtNumber": 1,
        "totalThoughts": 1,
        "nextThoughtNeeded": False,
        "sessionId": session,
    }
    async with (
        httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,  # type: ignore[arg-type]
    ):
        assert not (await client.call_tool("sequentialthinking", arguments)).is_error


def test_sigterm_ends_open_event_streams_instead_of_waiting_out_the_graceful_timeout(tmp_path: Path) -> None:
    from http_peer import http_server
    from stdio_peer import server_env

    (tmp_path / "tokens").write_text(f"alice {ALICE}\n")
    env = server_env(tmp_path / "data", THINKING_UI="true", THINKING_HTTP_TOKENS_FILE=str(tmp_path / "tokens"),
                     THINKING_DEADLINE="50")  # fmt: skip
    with http_server(env) as server:
        base = server.url.removesuffix("/mcp")
        with httpx2.Client(base_url=base, timeout=30) as http:
            asyncio.run(record(server.url, ALICE, "open"))
            signed = http.post("/ui/login", data={"token": ALICE}, headers={"origin": base})
            assert signed.status_code == 303
            with http.stream("GET", "/ui/s/open/events") as stream:
                assert stream.status_code == 200
                lines = stream.iter_lines()
                assert next(lines).startswith("retry:")
                server.process.send_signal(signal.SIGTERM)
                rest = list(lines)  # the stream ends: the server closes it on its way out
                # Within the 55 s graceful timeout (THINKING_DEADLINE + 5) only if the stream ended at once.
                # (uvicorn re-raises the SIGTERM it handled once it has shut down: that is a clean exit.)
                assert server.process.wait(timeout=20) in (0, -signal.SIGTERM)
    assert "event: end" not in rest  # ended by the shutdown, not by a revoked sign-in
