"""`thinking-hats doctor`: what the server would run with, and whether each part works."""

from __future__ import annotations

import sys
from typing import Any

from pydantic import SecretStr

from .config import Settings
from .errors import StoreError


def masked_settings(settings: Settings) -> dict[str, Any]:
    """Every setting that differs from unset, secrets shown only as set/unset."""
    shown: dict[str, Any] = {}
    for name, value in settings.__dict__.items():
        if value is None:
            continue
        if isinstance(value, SecretStr):
            shown[name.upper()] = "set (hidden)" if value.get_secret_value() else "empty"
        elif name == "thinking_store":
            shown[name.upper()] = settings.store_shown()  # its password masked, in any form
        else:
            shown[name.upper()] = str(value)
    return shown


async def run_doctor(settings: Settings) -> int:
    ok = True
    out = sys.stdout
    out.write("thinking-hats doctor\n\nConfiguration:\n")
    for key, value in masked_settings(settings).items():
        out.write(f"  {key} = {value}\n")

    out.write("\nStore:\n")
    try:
        from .store import open_store

        store = await open_store(settings.postgres_url(), settings.database_path())
        try:
            health = await store.health()
        finally:
            await store.close()
        for key, value in health.items():
            out.write(f"  {key}: {value}\n")
        if health["sessions"] > settings.thinking_max_sessions:
            out.write(
                f"  note: {health['sessions']} sessions, over THINKING_MAX_SESSIONS={settings.thinking_max_sessions}:"
                " the cap applies to each principal (THINKING_MAX_SESSIONS_PER_PRINCIPAL, by default this one),"
                " and sessions used within THINKING_SESSION_GRACE_MINUTES="
                f"{settings.thinking_session_grace_minutes:g} are never evicted.\n"
            )
    except StoreError as exc:
        ok = False
        from .redaction import scrub

        out.write(f"  FAILED: {scrub(str(exc), settings.secrets())}\n")

    out.write("\nPrompts:\n")
    try:
        from .prompts import PROMPT_NAMES, Prompts

        prompts = Prompts.from_settings(settings)
        for name in PROMPT_NAMES:
            out.write(f"  {name}: {prompts.source(name)}\n")
        # Rendered as the server renders them: a bad override fails here, not on every thought.
        for problem in prompts.problems():
            ok = False
            out.write(f"  FAILED: {problem}\n")
    except ValueError as exc:
        ok = False
        out.write(f"  FAILED: {exc}\n")

    out.write("\nProvider:\n")
    from .providers import ProviderConfigError, check_reachability, resolve_provider

    try:
        provider = resolve_provider(settings)
    except ProviderConfigError as exc:
        out.write(f"  MISCONFIGURED: {exc}\n")
        return 1
    if provider is None:
        out.write("  none configured: record-only mode (set LLM_PROVIDER and its key to enable the hats)\n")
    else:
        for key, value in provider.describe().items():
            out.write(f"  {key}: {value}\n")
        reachable, detail = await check_reachability(provider)
        out.write(f"  reachability: {'ok' if reachable else 'FAILED'} ({detail})\n")
        ok = ok and reachable
    out.write("\n" + ("All checks passed.\n" if ok else "Some checks failed: see above.\n"))
    return 0 if ok else 1
