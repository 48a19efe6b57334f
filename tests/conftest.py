"""Shared test setup: no test may reach the network, and every test gets a clean, isolated environment."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from thinking_hats.config import Settings

if TYPE_CHECKING:  # agno and the SDKs load only in the tests that build an orchestrator
    from thinking_hats.hats.orchestrator import Orchestrator

pytest_plugins = ["fakes", "pg"]  # pg: the postgres_cluster (session) and postgres_url (per test) fixtures

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


class UnexpectedNetworkAccess(AssertionError):
    pass


def _is_local(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # unix socket
        return True
    host = address[0]
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_attempts: list[str] = []


def _refuse(address: Any) -> None:
    _attempts.append(repr(address))
    raise UnexpectedNetworkAccess(f"test tried to reach {address!r}: tests must stay offline")


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _is_local(address):
        _refuse(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> Any:
    if not _is_local(address):
        _refuse(address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Refuses non-loopback connections, and fails the test afterwards even if the code swallowed the refusal."""
    _attempts.clear()
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    yield
    assert not _attempts, f"the test tried to reach the network: {_attempts}"


Build = Callable[[Settings], "Orchestrator"]


@pytest.fixture
async def build() -> AsyncIterator[Build]:
    """Orchestrators made from settings (over the provider they name), closed after the test."""
    from thinking_hats.hats.orchestrator import Orchestrator
    from thinking_hats.hats.prompts import Prompts
    from thinking_hats.hats.providers import resolve_provider

    made: list[Orchestrator] = []

    def make(settings: Settings) -> Orchestrator:
        provider = resolve_provider(settings)
        assert provider is not None
        made.append(Orchestrator(settings, provider, Prompts.from_settings(settings)))
        return made[-1]

    yield make
    for orchestrator in made:
        await orchestrator.aclose()


@pytest.fixture(autouse=True)
def _keep_root_logging() -> Iterator[None]:
    """`cli.main` installs its own stderr handler on the root logger; put pytest's back after every test."""
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


_OUR_VARIABLES_PREFIXES = ("THINKING_", "LLM_", "CRASH_", "AGNO_")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Tests never see the developer's own configuration, keys or data directory."""
    import os

    from thinking_hats.config import Settings

    names = {name.upper() for name in Settings.model_fields}
    for name in list(os.environ):
        if name.upper() in names or name.upper().startswith(_OUR_VARIABLES_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("THINKING_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DISABLE_THOUGHT_LOGGING", "true")
    monkeypatch.chdir(tmp_path)  # no stray .env from the checkout
    yield
