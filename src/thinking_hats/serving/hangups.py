"""SIGHUPs counted from the first moment of `serve --transport http`, so that none is lost or fatal.

A SIGHUP asks to re-read the tokens and limits files. Before the server's own handler is in place, Python's
default would end the process, and a handler installed after the files were read would miss a SIGHUP that landed
in between. So the command counts SIGHUPs from its start (`count`), and whoever reads the files notes the count
(the generation) first: once its real handler is in place it compares, and reads again if a SIGHUP came meanwhile.
Under `--workers` the supervisor keeps the count in shared memory, bumped before it passes a SIGHUP on.
"""

from __future__ import annotations

import signal

_seen = 0


def _counted(signum: int, frame: object) -> None:
    global _seen
    _seen += 1


def count() -> None:
    """Count SIGHUPs in this process from now on, instead of dying of them."""
    signal.signal(signal.SIGHUP, _counted)


def seen() -> int:
    """How many SIGHUPs this process has had since `count`."""
    return _seen
