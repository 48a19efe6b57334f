"""The `thinking-hats` command. With no arguments it serves MCP over stdio, which is what MCP clients launch."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import __version__
from ..errors import ThinkingError
from ..terminal import json_text, printable

EXAMPLES = """\
examples:
  thinking-hats                                  serve MCP over stdio (what MCP clients launch)
  thinking-hats serve --transport http --port 8000
  thinking-hats think "Should we split the monolith this quarter?"
  thinking-hats route "Should we split the monolith this quarter?"
  thinking-hats route --eval my-labels.jsonl
  thinking-hats doctor
  thinking-hats sessions list
  thinking-hats sessions export SESSION_ID --format md
  thinking-hats ui                               the web view of your sessions on 127.0.0.1
  thinking-hats usage --days 7
  sudo thinking-hats usage --env-file /etc/thinking-hats/env     the service's usage, on its server
"""

QUICK_START_LINE = (
    "thinking-hats: an MCP server on stdin/stdout, waiting for an MCP client (clients launch this command "
    "themselves; see `thinking-hats --help` for the others). Ctrl-C stops it."
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="thinking-hats",
        description="MCP server for step-by-step thinking, augmented by parallel thinking-hat agents.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"thinking-hats {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser("serve", help="serve MCP over stdio (default) or streamable HTTP")
    serve.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio: one MCP client that launches this command talks over stdin/stdout (default); "
        "http: streamable HTTP on --host/--port, for many clients and tokens",
    )
    serve.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=_whole_number(0, 65_535), default=8000, help="HTTP port (default 8000; 0 picks a free one)"
    )
    serve.add_argument(
        "--workers",
        type=_whole_number(1, 64),
        default=1,
        help="HTTP only: processes serving the port over one store (default 1; 1-64)",
    )

    think = sub.add_parser("think", help="run one thought from the terminal and print the synthesis")
    think.add_argument("thought", help="the thought or question")
    think.add_argument(
        "--strategy",
        choices=["auto", "single", "double", "triple", "full", "none"],
        help="how many hats think about it: auto (default) lets the router choose from the thought; single, double, "
        "triple or full (every hat) force it; none only records the thought (no model call)",
    )
    think.add_argument("--session", help="session id to record the thought in (default: a new one)")
    think.add_argument("--json", action="store_true", help="print the structured reply as JSON")

    route = sub.add_parser("route", help="show how a thought is routed (score, factors, strategy, hats); no model call")
    route.add_argument("thought", nargs="?", help="the thought to route")
    route.add_argument("--eval", type=Path, metavar="FILE", help="agreement with a labelled JSONL file instead")
    route.add_argument("--misses", action="store_true", help="with --eval: list every disagreement")
    route.add_argument("--json", action="store_true", help="print JSON")

    doctor_help = "show configuration (secrets masked), store health, prompts and provider reach"
    sub.add_parser(
        "doctor",
        help=doctor_help,
        description=doctor_help[0].upper() + doctor_help[1:] + ". Reads the same environment and .env as the "
        "server. Exit status 0 when every check passes, 1 when one fails (an unusable store, a bad prompt "
        "override, a provider that is misconfigured or unreachable).",
    )

    principal_help = "only this principal's sessions (a name from THINKING_HTTP_TOKENS_FILE, or 'local')"
    sessions = sub.add_parser("sessions", help="list, show or export recorded sessions")
    sessions.add_argument("--principal", help=principal_help)
    # --principal goes before or after the action (`sessions list --principal alice`); SUPPRESS keeps an action's
    # parser from overwriting one given before it with its default.
    by_principal = argparse.ArgumentParser(add_help=False)
    by_principal.add_argument("--principal", default=argparse.SUPPRESS, help=principal_help)
    ssub = sessions.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = ssub.add_parser("list", help="recent sessions", parents=[by_principal])
    ls.add_argument(
        "--limit", type=_whole_number(1, 10_000_000), default=20, help="how many, newest first (default 20)"
    )
    show = ssub.add_parser("show", help="print a session as a Markdown report", parents=[by_principal])
    show.add_argument("session_id")
    show.add_argument("--open", action="store_true", help="open the session in the web view (`thinking-hats ui`)")
    export = ssub.add_parser("export", help="export a session", parents=[by_principal])
    export.add_argument("session_id")
    export.add_argument(
        "--format", choices=["md", "json"], help="md or json (default: from the --output extension, else md)"
    )
    export.add_argument("--output", "-o", type=Path, help="write to this file instead of stdout")

    ui = sub.add_parser("ui", help="serve the web view of your sessions on 127.0.0.1 (opens a browser if it can)")
    ui.add_argument("--port", type=_whole_number(0, 65535), default=0, help="port (default: a free one)")
    ui.add_argument("--principal", default="local", help="whose sessions (default: local, this machine's own)")

    usage = sub.add_parser(
        "usage", help="model usage per principal and UTC day: tokens in/out/cached, calls, thoughts, refusals"
    )
    usage.add_argument("--principal", help="only this principal (a name from THINKING_HTTP_TOKENS_FILE, or 'local')")
    usage.add_argument("--since", type=_day, metavar="YYYY-MM-DD", help="from this UTC day on")
    usage.add_argument("--until", type=_day, metavar="YYYY-MM-DD", help="up to this UTC day (included)")
    usage.add_argument(
        "--days", type=_whole_number(1, 100_000), help="the last N UTC days, today included (instead of --since)"
    )
    usage.add_argument(
        "--env-file",
        type=Path,
        metavar="FILE",
        help="read the configuration (THINKING_STORE...) from this file, as the service does, e.g. "
        "/etc/thinking-hats/env; its variables win over this shell's. Default: the environment and ./.env",
    )
    usage.add_argument("--json", action="store_true", help="print JSON")
    return p


def _day(text: str) -> str:
    import time

    try:
        time.strptime(text, "%Y-%m-%d")
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a day as YYYY-MM-DD (got {text!r})") from None
    return text


def _whole_number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: out-of-range numbers are refused with the range (argparse names the option), not a
    traceback from the socket or the database."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"takes a whole number from {low} to {high} (got {text!r})")
        return value

    return parse


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "route" and args.misses and args.eval is None:
        parser.error("route --misses lists the disagreements with a labelled file: add --eval FILE")
    if args.command == "serve" and getattr(args, "transport", "stdio") == "http":
        from ..serving import hangups

        hangups.count()  # a SIGHUP during start-up is counted (the files are then read again), never fatal
    if "httpx" not in sys.modules:
        # agno imports httpx, whose package imports its own command line (click, pygments, rich's progress and
        # syntax) whenever those are installed, as uvicorn's click is: ~20 ms of every start for a CLI this
        # process never runs. Without it `httpx.main` only says to install httpx[cli].
        sys.modules["httpx._main"] = None  # type: ignore[assignment]
    if args.command == "think":
        import gc

        # One thought, then exit: importing agno and the SDK makes ~10^5 objects and the collections they set off
        # cost ~0.1 s, for garbage a short-lived process never needs back. On again once the thought is done.
        gc.disable()
        try:
            return _main(args)
        finally:
            gc.enable()
    return _main(args)


def _main(args: argparse.Namespace) -> int:
    env_file: Path | None = getattr(args, "env_file", None)
    if env_file is not None:
        try:
            env_file.read_bytes()
        except OSError as exc:
            return _fail(
                f"--env-file {env_file}: {exc.strerror or exc}. Name the service's environment file "
                "(EnvironmentFile= in its unit, e.g. /etc/thinking-hats/env); it is readable by root and the "
                "service's group only, so run this as one of them (sudo)"
            )
    try:
        from ..config import Settings

        # A named file is the service's environment: its variables win over this shell's, as under systemd.
        settings = Settings.read(env_file, file_first=True) if env_file is not None else Settings()
    except ValidationError as exc:
        return _fail(_settings_problem(exc))
    from ..ops.logs import setup_logging

    setup_logging(settings)
    command = args.command or "serve"
    try:
        if command == "serve":
            from ..serving.transport import serve_http, serve_stdio

            if getattr(args, "transport", "stdio") == "http":
                serve_http(settings, args.host, args.port, args.workers)
            else:
                if sys.stdin.isatty():
                    # Run by hand, a stdio server waits silently for JSON-RPC: say so once, so it does not look hung.
                    # Piped (an MCP client launched it) it stays silent: stderr may be the client's log.
                    print(QUICK_START_LINE, file=sys.stderr, flush=True)
                serve_stdio(settings)
            return 0
        if command == "sessions" and getattr(args, "open", False):
            from ..serving.viewer import serve_ui

            serve_ui(settings, session_id=args.session_id, principal=args.principal or "local")
            return 0
        if command == "ui":
            from ..serving.viewer import serve_ui

            serve_ui(settings, args.port, principal=args.principal)
            return 0
        if command == "sessions":
            return _sessions(settings, args)
        if command == "usage":
            return _usage(settings, args)
        if command == "route":
            from ..routing.evaluation import route_command

            sys.stdout.write(route_command(settings, args.thought, args.eval, args.json, args.misses))
            return 0
        if command == "doctor":
            from .doctor import run_doctor

            return asyncio.run(run_doctor(settings))
        if command == "think":
            import gc

            from .console import think

            status = asyncio.run(think(settings, args.thought, args.strategy, args.session, args.json))
            # agno and the SDKs leave ~10^5 objects behind, and collecting them at exit took 0.3-0.9 s after the
            # answer was printed. Everything that needs closing is closed: exit without that last collection.
            gc.freeze()
            return status
    except KeyboardInterrupt:
        return 130
    except ThinkingError as exc:
        return _fail(f"{exc}. {exc.hint}" if exc.hint else str(exc))
    except ValidationError as exc:  # the same checks the tools apply, e.g. a session id with a space
        return _fail("invalid input: " + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()))
    except Exception as exc:
        from ..errors import ConfigurationError

        if isinstance(exc, ConfigurationError):
            return _fail(str(exc))
        raise
    return 2


def _sessions(settings: Any, args: argparse.Namespace) -> int:
    from ..store import open_store
    from ..tools.report import load, session_json, session_markdown

    async def fetch() -> Any:
        store = await open_store(settings.postgres_url(), settings.database_path())
        try:
            if args.action == "list":
                return await store.sessions(args.principal, limit=args.limit)
            return await load(store, args.principal, args.session_id)
        finally:
            await store.close()

    found = asyncio.run(fetch())
    if args.action == "list":
        sys.stdout.write(_session_table(found))
        return 0
    output: Path | None = getattr(args, "output", None)
    if args.action == "show" or _export_format(args.format, output) == "md":
        text = session_markdown(*found)
    else:
        text = json_text(session_json(*found), indent=2) + "\n"
    if output is not None:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            return _fail(
                f"cannot write {output}: {exc.strerror or exc}. Name a file in a directory that exists and you can "
                "write to, or leave out --output to print the export"
            )
        print(f"wrote {printable(output)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _usage(settings: Any, args: argparse.Namespace) -> int:
    import dataclasses
    import time

    from ..store import open_store

    since = args.since
    if args.days is not None:
        since = time.strftime("%Y-%m-%d", time.gmtime(time.time() - (args.days - 1) * 86400))

    # Which store was read goes to stderr (stdout stays the table or the JSON): run on the server without the
    # service's environment, the command would otherwise read this user's own SQLite file and show nothing wrong.
    print(f"usage recorded in {_store_named(settings)}", file=sys.stderr, flush=True)

    async def fetch() -> Any:
        store = await open_store(settings.postgres_url(), settings.database_path())
        try:
            return await store.usage(args.principal, since, args.until)
        finally:
            await store.close()

    rows = asyncio.run(fetch())
    if args.json:
        sys.stdout.write(json_text([dataclasses.asdict(r) for r in rows], indent=2) + "\n")
        return 0
    sys.stdout.write(_usage_table(rows))
    return 0


def _store_named(settings: Any) -> str:
    """The store a command reads, as it may be shown: the PostgreSQL URL with its password masked, or the file."""
    if settings.postgres_url() is not None:
        return str(settings.store_shown())
    path = settings.database_path()
    if path is None:
        return "memory (THINKING_STORE=memory: nothing is kept between runs)"
    return printable(path, newlines=False)


def _usage_table(rows: Sequence[Any]) -> str:
    if not rows:
        return "no usage recorded\n"
    header = ("DAY", "PRINCIPAL", "INPUT", "OUTPUT", "CACHED", "CALLS", "THOUGHTS", "REFUSALS")
    counts = ("input_tokens", "output_tokens", "cached_tokens", "calls", "thoughts", "refusals")
    cells = [(r.day, printable(r.principal, newlines=False), *(f"{getattr(r, c):,}" for c in counts)) for r in rows]
    widths = [max(len(row[i]) for row in (header, *cells)) for i in range(len(header))]
    lines = [
        "  ".join(c.rjust(w) if i >= 2 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        for row in (header, *cells)
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _export_format(given: str | None, output: Path | None) -> str:
    """--format when given, else the output file's extension (.json or .md), else Markdown."""
    if given:
        return given
    return "json" if output is not None and output.suffix.lower() == ".json" else "md"


def _session_table(sessions: Sequence[Any]) -> str:
    if not sessions:
        return "no sessions yet\n"
    import time

    header = ("SESSION", "TOOL", "ENTRIES", "UPDATED", "PRINCIPAL")
    rows = [
        (
            printable(s.id, newlines=False),
            s.tool,
            str(s.entries),
            time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated)),
            printable(s.principal, newlines=False),
        )
        for s in sessions
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.rjust(w) if i == 2 else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in (header, *rows)
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _settings_problem(exc: ValidationError) -> str:
    lines = ["invalid configuration:"]
    from ..config import Settings

    for err in exc.errors():
        name = "_".join(str(p) for p in err["loc"]).upper() or "settings"
        field = Settings.model_fields.get(name.lower())
        allowed = re.search(r"\(([-\d.]+-[\d.]+)\)\.$", (field.description or "") if field else "")
        lines.append(f"  {name}: {err['msg']}" + (f" (allowed: {allowed[1]})" if allowed else ""))
    return "\n".join(lines)


def _fail(message: str) -> int:
    print(f"thinking-hats: {printable(message)}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
