"""The secrets a URL can carry, and the URL shown without them: one masking for every URL we print or export.

A store URL (libpq) can hold a password in its userinfo (`user:password@host`), as a query parameter
(`?password=...`, `?sslpassword=...`), or inside a parameter whose value is itself a keyword connection string
(`?dbname=host%3Dx%20password%3Dsecret`). A model endpoint (LLM_BASE_URL) or a collector (the OTLP endpoints) can
hold one in its userinfo or as a query key (`?api-key=`, `?key=`, `?token=`, a signature...). A malformed URL (a
bad port, a stray bracket) is masked too: where it cannot be parsed, whatever follows `user:` up to the `@` and
the value of every secret-looking query key are taken as secrets.

Messages, logs, `/healthz`, `doctor`, `usage` and trace attributes show a URL only through `redact_url`, and every
log line and tool error is scrubbed of `passwords_in` (every URL setting's, see `Settings.secrets`) as a second net.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

MASK = "***"
# Query keys whose value is a secret, compared lower-cased with '-' read as '_'.
_SECRET_KEYS = frozenset(
    {
        "password", "sslpassword", "passwd", "pass", "pwd", "secret", "client_secret",
        "key", "api_key", "apikey", "access_key", "token", "access_token", "auth", "auth_token",
        "authorization", "sig", "signature", "x_api_key", "credential", "credentials",
    }
)  # fmt: skip
# `password=value` or `password='quoted value'` inside a keyword connection string.
_KEYWORD = re.compile(r"\b(ssl)?password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
# For a URL that cannot be parsed: `scheme://user:secret@` (up to the last '@') and `?key=secret` / `&key=secret`.
_USERINFO = re.compile(r"://[^:/?#@\s]*:(\S*)@")
_QUERY = re.compile(r"[?&;]([A-Za-z0-9_.-]+)=([^&#;\s]*)")


def _secret_key(key: str) -> bool:
    return key.lower().replace("-", "_") in _SECRET_KEYS


def passwords_in(url: str) -> list[str]:
    """Every secret the URL carries, as given and percent-decoded (either may reach a message)."""
    found: list[str] = []
    try:
        parts = urlsplit(url)
        if parts.password:
            found += [parts.password, unquote(parts.password)]
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if _secret_key(key) and value:
                found.append(value)
            found += [m.group(2).strip("'") for m in _KEYWORD.finditer(value)]
    except ValueError:  # not a URL as urllib reads it (a bad port, brackets): the patterns below still apply
        pass
    found += [m.group(1) for m in _USERINFO.finditer(url)]
    found += [m.group(2) for m in _QUERY.finditer(url) if _secret_key(m.group(1))]
    found += [m.group(2).strip("'") for m in _KEYWORD.finditer(unquote(url))]
    found += [unquote(s) for s in found]
    found += [quote(s, safe="") for s in found] + [quote_plus(s) for s in found]
    return sorted({s for s in found if s and s != MASK}, key=len, reverse=True)


def redact_url(url: str) -> str:
    """The URL with every secret replaced by ***; the rest (user, host, port, path, other parameters) as given."""
    shown = _USERINFO.sub(lambda m: m.group(0).replace(m.group(1), MASK) if m.group(1) else m.group(0), url)
    shown = _QUERY.sub(lambda m: m.group(0).replace(f"={m.group(2)}", f"={MASK}") if _secret_key(m.group(1))
                       and m.group(2) else m.group(0), shown)  # fmt: skip
    return scrub(shown, passwords_in(url))


def scrub(text: str, secrets: list[str]) -> str:
    for secret in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text
