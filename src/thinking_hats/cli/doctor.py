"""`thinking-hats doctor`: what the server would run with, and whether each part works."""

from __future__ import annotations

import sys

from pydantic import SecretStr

from ..config import Settings
from ..errors import StoreError

UNSET = "(unset)"


def masked_settings(settings: Settings) -> dict[str, str]:
    """Every setting, by variable name: its value, `(unset)`, or for a secret only whether it is set.

    The model variables also say which model runs when they are unset (the provider's default, or an older
    `{PROVIDER}_*_MODEL_ID` name), so what doctor lists is what the server would use.
    """
    from ..ops.redaction import redact_url

    shown: dict[str, str] = {}
    urls = settings.urls()
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if isinstance(value, SecretStr):
            shown[name.upper()] = "set (hidden)" if value.get_secret_value() else UNSET
        elif value is None or value == "":
            shown[name.upper()] = UNSET
        elif name in urls:
            shown[name.upper()] = redact_url(urls[name])  # its password or key masked, in any form
        else:
            shown[name.upper()] = str(value)
    models = _resolved_models(settings)
    if models is not None:
        for variable, model in zip(("LLM_MODEL", "LLM_SYNTHESIS_MODEL"), models, strict=True):
            if shown[variable] == UNSET:
                shown[variable] = f"{UNSET}: {model} is used"
    return shown


def _resolved_models(settings: Settings) -> tuple[str, str] | None:
    """The hat and synthesis models the provider would run (None: no provider, or one that cannot work)."""
    from ..hats.providers import ProviderConfigError, resolve_provider

    try:
        provider = resolve_provider(settings)
    except ProviderConfigError:
        return None  # said under Provider, with the variable to set
    return None if provider is None else (provider.model, provider.synthesis_model)


async def run_doctor(settings: Settings) -> int:
    ok = True
    out = sys.stdout
    out.write("thinking-hats doctor\n\nConfiguration:\n")
    for key, value in masked_settings(settings).items():
        out.write(f"  {key} = {value}\n")

    out.write("\nStore:\n")
    try:
        from ..store import open_store

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
        from ..ops.redaction import scrub

        out.write(f"  FAILED: {scrub(str(exc), settings.secrets())}\n")

    out.write("\nPrompts:\n")
    try:
        from ..hats.prompts import PROMPT_NAMES, Prompts

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
    from ..hats.providers import ProviderConfigError, check_reachability, resolve_provider

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
