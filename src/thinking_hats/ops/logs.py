"""Logging to stderr only, with every configured secret scrubbed from every record.

Provider error bodies can echo a key back ("Incorrect API key provided: sk-..."), and agno logs them; the
filter sits on our handlers, so whatever library wrote the record, the key never reaches a terminal or a file.
"""

from __future__ import annotations

import logging
import sys
import traceback

from ..config import Settings
from ..terminal import printable

AGNO_LOGGERS = ("agno", "agno-team", "agno-workflow")


class Redact(logging.Filter):
    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = sorted(set(secrets), key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info:  # a traceback can hold a key too: render it here, scrubbed, in the message
            message += "\n" + "".join(traceback.format_exception(*record.exc_info))
            record.exc_info, record.exc_text = None, None
        # Provider error bodies and agno's records can carry a server's or a model's control characters.
        record.msg, record.args = printable(scrub(message, self.secrets)), None
        return True


def scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def stderr_handler(settings: Settings, level: int, fmt: str) -> logging.Handler:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(fmt))
    handler.setLevel(level)
    handler.addFilter(Redact(settings.secrets()))
    return handler


def setup_logging(settings: Settings) -> None:
    """The CLI's logging: our records to stderr at THINKING_LOG_LEVEL, secrets scrubbed."""
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(stderr_handler(settings, logging.NOTSET, "%(levelname)s %(name)s: %(message)s"))
    root.setLevel(settings.thinking_log_level)


def route_agno_logs(settings: Settings) -> None:
    """Give agno's loggers a stderr handler before agno builds its own, which writes to stdout off a terminal.

    agno resets its loggers' levels on every run, so the level that holds is the handler's: its errors repeat
    what the reply already reports, and show only at THINKING_LOG_LEVEL=DEBUG.
    """
    level = logging.DEBUG if settings.thinking_log_level == "DEBUG" else logging.CRITICAL
    for name in AGNO_LOGGERS:
        logger = logging.getLogger(name)
        for old in list(logger.handlers):
            logger.removeHandler(old)
        logger.addHandler(stderr_handler(settings, level, "agno %(levelname)s %(message)s"))
        logger.propagate = False
