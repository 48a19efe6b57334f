"""HTTP exposure: foreign Host and Origin refused, the token enforced, bodies capped, no open bind without a token."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from http_peer import INITIALIZE, HttpServer, http_server, post
from stdio_peer import server_env

TOKEN = "tok-exposure-test-1234"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    env = server_env(tmp_path_factory.mktemp("http") / "data", THINKING_HTTP_MAX_BODY="4096")
    with http_server(env) as running:
        yield running


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    env = server_env(tmp_path_factory.mktemp("token") / "data", THINKING_HTTP_TOKEN=TOKEN)
    with http_server(env) as running:
        yield running


def test_a_plain_loopback_request_is_served(server: HttpServer) -> None:
    assert post(server.url, INITIALIZE).status_code == 200


def test_a_foreign_host_header_is_refused(server: HttpServer) -> None:
    response = post(server.url, INITIALIZE, host="evil.example:80")
    assert response.status_code in (403, 421)


def test_a_foreign_origin_is_refused(server: HttpServer) -> None:
    response = post(server.url, INITIALIZE, origin="http://evil.example")
    assert response.status_code == 403


def test_a_body_over_the_limit_is_refused(server: HttpServer) -> None:
    big = INITIALIZE | {"params": INITIALIZE["params"] | {"padding": "x" * 10_000}}  # type: ignore[operator]
    response = post(server.url, big)
    assert response.status_code == 413


def test_with_a_token_a_request_without_it_gets_401(guarded: HttpServer) -> None:
    assert post(guarded.url, INITIALIZE).status_code == 401
    assert post(guarded.url, INITIALIZE, authorization="Bearer wrong-token").status_code == 401
    assert post(guarded.url, INITIALIZE, authorization=f"Bearer {TOKEN}").status_code == 200


def test_the_401_does_not_echo_the_token(guarded: HttpServer) -> None:
    response = post(guarded.url, INITIALIZE, authorization=f"Bearer {TOKEN}x")
    assert response.status_code == 401 and TOKEN not in response.text
    assert "THINKING_HTTP_TOKEN" in response.text


def test_binding_beyond_loopback_without_a_token_is_refused_at_start_up(tmp_path: Path) -> None:
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
    done = subprocess.run(command, env=server_env(tmp_path / "data"), capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "THINKING_HTTP_TOKEN" in done.stderr and "Traceback" not in done.stderr
