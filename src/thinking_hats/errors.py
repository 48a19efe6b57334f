"""Errors the core raises. Each message says what to fix; the server turns them into isError replies."""

from __future__ import annotations


class ThinkingError(Exception):
    """Base class: a problem the caller can fix. `str(error)` is shown to the client as is."""

    hint: str | None = None

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class InvalidThought(ThinkingError):
    """The call is well-formed but does not fit the session (unknown revision target, branch without id...)."""


class StoreError(ThinkingError):
    """The session store cannot be opened or written."""


class StoreUnavailable(StoreError):
    """The store cannot be reached (PostgreSQL down, a network cut): retry once it is back."""


class StoreBusy(StoreError):
    """A bounded wait ran out (a lock held by another call, a statement timeout): the same call can be retried."""


class ConfigurationError(Exception):
    """Start-up refused: the message says what to set."""
