"""The store's password never shows: not in messages, logs, tool errors, `/healthz` or `doctor`, in whichever form
the URL carries it (userinfo, `?password=`, a keyword connection string inside a parameter)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from mcp import Client

from calls import text_of
from pg import PostgresCluster, private_cluster
from thinking_hats.cli.doctor import run_doctor
from thinking_hats.config import Settings
from thinking_hats.ops.logs import stderr_handler
from thinking_hats.ops.redaction import passwords_in, redact_url
from thinking_hats.server import build_server

SECRET = "Hunter2-s3cret-pw"
FORMS = {
    "userinfo": "postgresql://postgres:{pw}@127.0.0.1:{port}/postgres",
    "query": "postgresql://postgres@127.0.0.1:{port}/postgres?password={pw}&connect_timeout=2",
    "keyword": "postgresql://127.0.0.1:{port}/?dbname=postgres%20user%3Dpostgres%20password%3D{pw}",
}


@pytest.mark.parametrize("form", FORMS)
def test_every_form_of_the_password_is_found_and_masked(form: str) -> None:
    url = FORMS[form].format(pw=SECRET, port=5432)
    assert SECRET in passwords_in(url)
    shown = redact_url(url)
    assert SECRET not in shown and "***" in shown
    assert "127.0.0.1" in shown and "5432" in shown  # the rest stays, to say where the store is


@pytest.mark.parametrize("form", FORMS)
async def test_doctor_shows_thinking_store_masked_and_its_failure_without_the_password(
    form: str, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings(thinking_store=FORMS[form].format(pw=SECRET, port=1))  # nothing listens on port 1
    await run_doctor(settings)
    out = capsys.readouterr().out
    assert SECRET not in out
    assert "THINKING_STORE = postgresql://" in out and "***" in out
    assert "FAILED" in out


@pytest.fixture
def stoppable() -> Iterator[PostgresCluster]:
    with private_cluster() as cluster:
        yield cluster


@pytest.mark.parametrize("form", ["userinfo", "query"])
async def test_postgresql_down_sends_tenants_and_logs_an_error_without_the_password(
    form: str, stoppable: PostgresCluster
) -> None:
    # The test cluster trusts loopback, so the password is accepted and ignored: only where it shows matters.
    settings = Settings(thinking_store=FORMS[form].format(pw=SECRET, port=stoppable.port))
    logged = io.StringIO()
    handler = stderr_handler(settings, logging.DEBUG, "%(message)s")
    handler.setStream(logged)
    logging.getLogger().addHandler(handler)
    try:
        async with Client(build_server(settings)) as client:
            first = await client.call_tool("sequentialthinking", THOUGHT | {"thoughtNumber": 1})
            stoppable.stop(keep=True)
            refused = await client.call_tool("sequentialthinking", THOUGHT | {"thoughtNumber": 2})
            logging.getLogger("thinking_hats").warning("store at %s failed", settings.thinking_store)
    finally:
        logging.getLogger().removeHandler(handler)
    assert not first.is_error, text_of(first)
    assert refused.is_error and "cannot be reached" in text_of(refused)
    assert SECRET not in text_of(refused) and SECRET not in logged.getvalue()
    assert "***" in logged.getvalue()


THOUGHT = {"thought": "Plan the rollout.", "totalThoughts": 3, "nextThoughtNeeded": True, "sessionId": "pw"}
