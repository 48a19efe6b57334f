"""The store URL's password, in every form a PostgreSQL URL can carry it, and the URL shown without it.

A libpq URL can hold a password in its userinfo (`user:password@host`), as a query parameter (`?password=...`,
`?sslpassword=...`), or inside a parameter whose value is itself a keyword connection string
(`?dbname=host%3Dx%20password%3Dsecret`). Messages, logs, `/healthz` and `doctor` show the URL only through
`redact_url`, and every log line and tool error is scrubbed of `passwords_in` as a second net.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

MASK = "***"
_SECRET_KEYS = ("password", "sslpassword")
# `password=value` or `password='quoted value'` inside a keyword connection string.
_KEYWORD = re.compile(r"\b(ssl)?password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def passwords_in(url: str) -> list[str]:
    """Every password the URL carries, as given and percent-decoded (either may reach a message)."""
    found: list[str] = []
    try:
        parts = urlsplit(url)
        if parts.password:
            found += [parts.password, unquote(parts.password)]
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if key.lower() in _SECRET_KEYS and value:
                found.append(value)
            found += [m.group(2).strip("'") for m in _KEYWORD.finditer(value)]
    except ValueError:  # not a URL at all (a bad port, brackets): look for keyword passwords only
        found += [m.group(2).strip("'") for m in _KEYWORD.finditer(unquote(url))]
    found += [quote(s, safe="") for s in found] + [quote_plus(s) for s in found]
    return sorted({s for s in found if s and s != MASK}, key=len, reverse=True)


def redact_url(url: str) -> str:
    """The URL with every password replaced by ***; the rest (user, host, port, database) as given."""
    shown = url
    try:
        parts = urlsplit(url)
        if parts.password is not None:
            userinfo, _, hostport = parts.netloc.rpartition("@")
            shown = shown.replace(f"//{parts.netloc}", f"//{userinfo.split(':', 1)[0]}:{MASK}@{hostport}", 1)
        if parts.query:
            query = "&".join(
                f"{k}={MASK}" if (k := item.partition("=")[0]).lower() in _SECRET_KEYS else item
                for item in parts.query.split("&")
            )
            shown = shown.replace(f"?{parts.query}", f"?{query}", 1)
    except ValueError:
        pass
    return scrub(shown, passwords_in(url))


def scrub(text: str, secrets: list[str]) -> str:
    for secret in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text
