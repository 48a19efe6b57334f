"""Per-principal limits: model tokens per UTC day and model calls per minute, held as caps by the store.

Before its first model call, a thought reserves its worst case (its planned calls, and for each its estimated
input plus THINKING_MAX_OUTPUT_TOKENS) against its principal's limits, in one store transaction that also reads
what was spent today and what the other thoughts in flight hold (on any worker or replica: the transaction
locks the principal's row of the day). A thought whose worst case does not fit under a limit is refused up
front: it is still recorded, with a record-only reply whose notice names the limit, what was used and when it
resets. Each model call is charged as it ends, in a transaction of its own, and its share of the reservation is
given back with it; the rest of the reservation goes when the thought ends, however it ends (a reservation whose
process died lapses after twice THINKING_DEADLINE). The minute and the day are the store's (PostgreSQL's clock,
or the one machine's under SQLite), never a replica's.

`Limits` owns the table of limits: the defaults (THINKING_PRINCIPAL_TOKENS_PER_DAY,
THINKING_PRINCIPAL_CALLS_PER_MINUTE) and the overrides of THINKING_PRINCIPAL_LIMITS_FILE, one line per principal:

    # name    overrides (a limit left out keeps the default; none = no limit)
    alice     tokens_per_day=2000000 calls_per_minute=120
    ci-bot    tokens_per_day=none
    local     calls_per_minute=30
"""

from __future__ import annotations

import difflib
import logging
import re
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ..config import Settings
from ..errors import ConfigurationError
from ..terminal import counted

log = logging.getLogger("thinking_hats")

DAY_S = 86_400
MINUTE_S = 60
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_WHOLE = re.compile(r"^[0-9]{1,18}$")  # ASCII digits only: str.isdigit() also takes '²', which int() refuses
_KEYS = {
    "tokens_per_day": "THINKING_PRINCIPAL_TOKENS_PER_DAY",
    "calls_per_minute": "THINKING_PRINCIPAL_CALLS_PER_MINUTE",
}


@dataclass(frozen=True)
class Limit:
    """One principal's limits (None: no limit)."""

    tokens_per_day: int | None = None
    calls_per_minute: int | None = None

    @property
    def any(self) -> bool:
        return self.tokens_per_day is not None or self.calls_per_minute is not None


@dataclass(frozen=True)
class Spent:
    """What a principal has spent, as the store read it: today's tokens and this minute's model calls."""

    day: int  # days since the epoch (UTC) of the row read
    tokens: int = 0  # input + output tokens of that day
    minute: int = 0  # minutes since the epoch of the calls counted in `minute_calls`
    minute_calls: int = 0


@dataclass(frozen=True)
class Refusal:
    """A limit reached: what the reply's notice says, and the structured part of it."""

    setting: str  # the variable that sets the limit's default
    principal: str
    used: int
    limit: int
    unit: str  # "tokens today" | "model calls this minute"
    resets_at: float  # epoch seconds
    retry_after: int  # whole seconds until it resets
    needed: int = 0  # the most this thought could have spent of it (its reservation)
    held: int = 0  # of `used`: held by other thoughts in flight

    def notice(self) -> str:
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.resets_at))
        more = f", {self.held:,} of them held by thoughts in flight" if self.held else ""
        need = f"; this thought could need {self.needed:,} more" if self.needed else ""
        return (
            f"Limit reached: {self.setting} for principal '{self.principal}' ({self.used:,} of {self.limit:,} "
            f"{self.unit}{more}{need}); resets at {when}, retry after {self.retry_after} s. The thought was "
            "recorded without model analysis."
        )

    def as_json(self) -> dict[str, object]:
        return {
            "limit": self.setting,
            "principal": self.principal,
            "used": self.used,
            "allowed": self.limit,
            "resetsAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.resets_at)),
            "retryAfter": self.retry_after,
        }


@dataclass(frozen=True)
class Hold:
    """Tokens and model calls: what a thought reserves, or what all of a principal's thoughts in flight hold."""

    tokens: int = 0
    calls: int = 0


def over(principal: str, limit: Limit, spent: Spent, held: Hold, wanted: Hold, now: float) -> Refusal | None:
    """The limit that `wanted` more, on top of what was spent and what is held, would go past (None: it fits).
    A limit already reached refuses even a thought that wants nothing. Rate first: it resets soonest."""
    minute, day = minute_of(now), day_of(now)
    per_minute = limit.calls_per_minute
    if per_minute is not None:
        used = (spent.minute_calls if spent.minute == minute else 0) + held.calls
        if used >= per_minute or used + wanted.calls > per_minute:
            resets = (minute + 1) * MINUTE_S
            return Refusal(
                _KEYS["calls_per_minute"], principal, used, per_minute, "model calls this minute", resets,
                max(1, int(resets - now + 0.999)), wanted.calls, held.calls,
            )  # fmt: skip
    if limit.tokens_per_day is not None:
        used = (spent.tokens if spent.day == day else 0) + held.tokens
        if used >= limit.tokens_per_day or used + wanted.tokens > limit.tokens_per_day:
            resets = (day + 1) * DAY_S
            return Refusal(
                _KEYS["tokens_per_day"], principal, used, limit.tokens_per_day, "tokens today", resets,
                max(1, int(resets - now + 0.999)), wanted.tokens, held.tokens,
            )  # fmt: skip
    return None


def day_of(now: float) -> int:
    return int(now // DAY_S)


def minute_of(now: float) -> int:
    return int(now // MINUTE_S)


class Limits:
    """The limits of every principal: the defaults from Settings, each overridden by its line of the limits file.
    It owns the table in force, replaced whole when the file is re-read (SIGHUP), never dropped."""

    def __init__(self, default: Limit, overrides: dict[str, Limit] | None = None, path: Path | None = None) -> None:
        self.default = default
        self.overrides = overrides or {}
        self.path = path

    @classmethod
    def from_settings(cls, settings: Settings, principals: Collection[str] | None = None) -> Limits:
        """`principals`: every name a client can be (under HTTP); a line naming anyone else is refused, since a
        misspelt name would leave the principal it meant without its limit. None: names are not checked."""
        default = Limit(settings.thinking_principal_tokens_per_day, settings.thinking_principal_calls_per_minute)
        path = settings.thinking_principal_limits_file
        path = path.expanduser() if path is not None else None
        return cls(default, _read(path, default, principals) if path is not None else {}, path)

    def reload(self, principals: Collection[str] | None = None) -> None:
        """Re-read the limits file, if there is one: the next thought is checked against it. A file that cannot be
        used keeps the limits in force (logged as an error with the fix): a typo never lifts anyone's limit."""
        if self.path is None:
            return
        try:
            self.overrides = _read(self.path, self.default, principals)
        except ConfigurationError as exc:
            log.error("limits not reloaded, the previous ones stay in force: %s", exc)
            return
        log.warning("limits reloaded: %s with their own limits", counted(len(self.overrides), "principal"))

    @property
    def active(self) -> bool:
        """Whether any principal has a limit (if none has, the store is not asked what was spent)."""
        return self.default.any or any(limit.any for limit in self.overrides.values())

    def of(self, principal: str) -> Limit:
        return self.overrides.get(principal, self.default)

    def check(self, principal: str, spent: Spent | None, now: float | None = None) -> Refusal | None:
        """The limit this principal has reached (None: under both). Rate first: it resets soonest."""
        limit = self.of(principal)
        if spent is None or not limit.any:
            return None
        return over(principal, limit, spent, Hold(), Hold(), time.time() if now is None else now)


def _read(path: Path, default: Limit, principals: Collection[str] | None = None) -> dict[str, Limit]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(
            f"cannot read THINKING_PRINCIPAL_LIMITS_FILE {path}: {exc.strerror}: give a readable file"
        ) from None
    except UnicodeDecodeError:
        raise ConfigurationError(f"THINKING_PRINCIPAL_LIMITS_FILE {path} is not UTF-8 text: save it as UTF-8") from None
    found: dict[str, Limit] = {}
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        where = f"THINKING_PRINCIPAL_LIMITS_FILE {path}, line {number}"
        name, *settings = text.split()
        if not _NAME.match(name):
            raise ConfigurationError(f"{where}: '{name}' is not a principal name (letters, digits, '.', '_', '-')")
        if name in found:
            raise ConfigurationError(f"{where}: '{name}' is listed twice")
        if principals is not None and name not in principals:
            raise ConfigurationError(f"{where}: {_unknown(name, principals)}")
        values: dict[str, int | None] = {
            "tokens_per_day": default.tokens_per_day,
            "calls_per_minute": default.calls_per_minute,
        }
        for setting in settings:
            key, _, value = setting.partition("=")
            if key not in _KEYS:
                raise ConfigurationError(
                    f"{where}: unknown setting '{key}'; write tokens_per_day=N and/or calls_per_minute=N "
                    "(N a whole number, or none for no limit)"
                )
            values[key] = _amount(value, f"{where}: {key}")
        found[name] = Limit(values["tokens_per_day"], values["calls_per_minute"])
    return found


def _amount(value: str, where: str) -> int | None:
    if value.lower() in ("none", "unlimited"):
        return None
    if not _WHOLE.match(value) or int(value) < 1:
        raise ConfigurationError(f"{where}={value!r}: give a whole number of at least 1, or none for no limit")
    return int(value)


def _unknown(name: str, principals: Collection[str]) -> str:
    close = difflib.get_close_matches(name, list(principals), n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return (
        f"'{name}' is no principal of this server (a name from THINKING_HTTP_TOKENS_FILE, 'default' for "
        f"THINKING_HTTP_TOKEN, or 'local'): {hint}correct the name, or remove the line"
    )
