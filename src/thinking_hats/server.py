"""The MCP surface: three tools, session resources, a prompt. Each tool validates, calls one core function,
and formats the reply; the core (thoughts, crash, store) knows nothing of MCP."""

# No `from __future__ import annotations`: tool signatures close over settings (max_chars) and the
# SDK evaluates them at registration.

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator, Collection, Iterable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, GetPromptResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import __version__
from .analysis import ProgressFn
from .config import Settings
from .errors import InvalidThought, StoreError, ThinkingError
from .hats.augmenter import Augmentation, build_augmenter
from .ops import telemetry
from .ops.ledger import drain
from .ops.limits import Limits
from .ops.thought_log import Trace
from .serving.pipes import answered_before_eof, stdio_pipes
from .store import LOCAL, Caller, Store, open_store_for
from .tools.crash import Crash, CrashReply, CrashStep, NextAction, crash_error
from .tools.report import LIST_BY_MCP, iso, load, session_json, session_markdown
from .tools.thoughts import BRANCH_ID, JSON_SCHEMA_DIALECT, SESSION_ID, Thinking, ThoughtInput, ThoughtReply, prune

log = logging.getLogger("thinking_hats")

MINIMAL_NEXT = Literal["CONTINUE", "REVISE", "The final conclusion or answer"]
# Static resources get no Context in mcp 2.x: read_resource puts the caller here for them.
_CALLER: ContextVar[Caller | None] = ContextVar("thinking_hats_caller", default=None)
# Set on the ASGI scope by gate.Gate, after authentication; a client cannot set them.
PRINCIPAL_KEY, CONNECTION_KEY = "thinking_hats.principal", "thinking_hats.connection"


class MinimalReply(BaseModel):
    """The reply of the stateless `sequential_thinking` tool (the minimal seed's contract)."""

    model_config = ConfigDict(json_schema_extra=JSON_SCHEMA_DIALECT)

    status: Literal["THOUGHT_RECORDED"]
    step: int
    of: int = Field(description="total_steps as sent, even when step is beyond it.")
    thought: str
    next: MINIMAL_NEXT


@dataclass
class App:
    """Long-lived resources, created once per server run (per process under stdio)."""

    settings: Settings
    store: Store
    thinking: Thinking
    crash: Crash
    trace: Trace
    # Under stdio (and in-process clients) one lifespan serves one client, so it is the connection.
    process_key: str

    def caller(self, ctx: "Context[App, Any]") -> Caller:
        return caller_of(ctx, self.process_key)


def caller_of(ctx: "Context[Any, Any] | None", process_key: str | None = None) -> Caller:
    """The principal and connection of a request: from the ASGI scope over HTTP (set by the authentication
    middleware, never from a client header), else the local principal and this lifespan."""
    try:
        request = ctx.request_context.request if ctx is not None else None
    except ValueError:  # no request in flight (a context made outside a request)
        request = None
    scope = getattr(request, "scope", None)
    if scope is None:
        return Caller(LOCAL, process_key)
    return Caller(scope.get(PRINCIPAL_KEY, LOCAL), scope.get(CONNECTION_KEY))


class ThinkingServer(MCPServer[App]):
    """MCPServer whose argument errors say which field to fix (and use CRASH's error shape for `crash`)."""

    core: "_Core"

    async def run_stdio_async(self) -> None:
        """Serve stdin/stdout with the SDK's stdio transport over our asyncio pipes where they can serve it."""
        async with (
            stdio_pipes() as pipes,
            stdio_server(*(pipes or ())) as (read_stream, write_stream),
            answered_before_eof(read_stream, write_stream) as (read_stream, write_stream),
        ):
            server = self._lowlevel_server
            await server.run(read_stream, write_stream, server.create_initialization_options())

    async def health(self) -> dict[str, Any]:
        """For `GET /healthz`: the store answers (raises when it does not, or the server is not running)."""
        return await self.core.store().ping()

    def reload(self, principals: Collection[str] | None = None) -> None:
        """SIGHUP: re-read what an operator may change without a restart, here the limits file (the tokens are
        the gate's; `principals`: the names they now allow, which the limits file may name)."""
        self.core.reload(principals)

    def _redact(self, message: str) -> str:
        """A tool error as a tenant may see it: never a configured secret (the store's password above all)."""
        from .ops.redaction import scrub

        return scrub(message, self.core.settings.secrets())

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[App, Any] | None = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ThinkingError):
                if name == "crash":
                    return _crash_failure(self._redact(str(cause)), cause.hint)
                # The other tools have no hint field: the fix goes in the message (wrong tool, evicted session).
                message = f"{str(cause).rstrip('.')}. {cause.hint}" if cause.hint else str(cause)
                raise ToolError(self._redact(message)) from None
            if not isinstance(cause, ValidationError):
                raise
            problems = [_describe(err) for err in cause.errors()]
            if name == "crash":
                return _crash_failure("invalid arguments: " + "; ".join(problems), "Fix these fields and call again.")
            raise ToolError(
                f"Invalid arguments for {name} (nothing was recorded); fix and call again:\n- " + "\n- ".join(problems)
            ) from None

    async def read_resource(
        self, uri: Any, context: Context[App, Any] | None = None
    ) -> Iterable[Any] | InputRequiredResult:
        token = _CALLER.set(caller_of(context))
        try:
            return await super().read_resource(uri, context)
        finally:
            _CALLER.reset(token)

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context[App, Any] | None = None
    ) -> GetPromptResult | InputRequiredResult:
        # The SDK reports a missing argument or an unknown prompt as "Internal server error": say what is wrong.
        try:
            return await super().get_prompt(name, arguments, context)
        except ValueError as exc:
            raise MCPError(code=INVALID_PARAMS, message=str(exc)) from None


async def _existing(ctx: Context[App, Any], session_id: str) -> Any:
    """One session of the caller's; unknown, or another principal's, is the same not-found error."""
    try:
        store = ctx.request_context.lifespan_context.store
        # An MCP client may be remote (HTTP): it cannot run the CLI, so it is told what it can do instead.
        return await load(store, caller_of(ctx).principal, session_id, LIST_BY_MCP)
    except ThinkingError as exc:
        raise ResourceNotFoundError(str(exc)) from None


def _describe(err: Any) -> str:
    where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
    got = err.get("input")
    shown = "" if err.get("type") == "missing" else f" (got {_short(got)})"
    return f"{where}: {err.get('msg', 'invalid')}{shown}"


def _short(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _crash_failure(error: str, hint: str | None) -> CallToolResult:
    body = json.dumps(crash_error(error, hint), indent=2)
    return CallToolResult(content=[TextContent(type="text", text=body)], is_error=True)


def build_server(
    settings: Settings | None = None,
    http: bool = False,
    processes: int = 1,
    principals: Collection[str] | None = None,
) -> ThinkingServer:
    """The MCP server. `http`: it serves many users over HTTP (the console trace is then off unless asked for);
    `processes`: how many processes serve (--workers), so each opens its share of the store's connections;
    `principals`: every name a client can be (the limits file may name no other)."""
    settings = settings or Settings()
    core = _Core(settings, http, processes)
    core.principals = principals

    @asynccontextmanager
    async def lifespan(_: MCPServer[App]) -> AsyncIterator[App]:
        async with core.use() as app:
            yield app

    server = ThinkingServer(
        "thinking-hats",
        version=__version__,
        instructions=(
            "Think step by step: call a thinking tool once per thought. Replies carry a sessionId; "
            "pass it back to resume a session later."
        ),
        lifespan=lifespan,
        log_level=settings.thinking_log_level,
    )
    server.core = core
    for name, register in TOOLS.items():
        if name in settings.tools:
            register(server, settings)
    add_session_resources(server, core)
    add_thinking_prompt(server)
    return server


def _writes(settings: Settings) -> ToolAnnotations:
    """The annotations of a tool that records: it reaches the world only when a model provider is configured."""
    return ToolAnnotations(
        read_only_hint=False, destructive_hint=False, open_world_hint=settings.llm_provider is not None
    )


# Each registration below defines its tool inside a function because the signature's bounds (max_chars) come
# from the settings, and the SDK reads the signature when the tool is registered.


def add_sequentialthinking(server: ThinkingServer, settings: Settings) -> None:
    """`sequentialthinking`: the reference server's contract, plus sessions and the hats' analysis."""
    max_chars = settings.thinking_max_thought_chars

    @server.tool(
        name="sequentialthinking",
        description=(
            "Record one step of step-by-step thinking; call once per thought. Revise (isRevision + "
            "revisesThought) or branch (branchFromThought + branchId) earlier thoughts. Raise totalThoughts "
            "as needed. With a model configured, thinking-hat agents analyse the thought and the reply holds "
            "their synthesis. Pass sessionId to resume a session."
        ),
        annotations=_writes(settings).model_copy(update={"idempotent_hint": True}),
    )
    async def sequentialthinking(
        thought: Annotated[str, Field(min_length=1, max_length=max_chars, description="This thinking step.")],
        thought_number: Annotated[int, Field(validation_alias="thoughtNumber", ge=1, le=100_000)],
        total_thoughts: Annotated[
            int,
            Field(validation_alias="totalThoughts", ge=1, le=100_000, description="Current estimate."),
        ],
        next_thought_needed: Annotated[bool, Field(validation_alias="nextThoughtNeeded")],
        ctx: Context[App, Any],
        is_revision: Annotated[bool | None, Field(validation_alias="isRevision")] = None,
        revises_thought: Annotated[int | None, Field(validation_alias="revisesThought", ge=1)] = None,
        branch_from_thought: Annotated[int | None, Field(validation_alias="branchFromThought", ge=1)] = None,
        branch_id: Annotated[
            str | None, Field(validation_alias="branchId", min_length=1, max_length=64, pattern=BRANCH_ID)
        ] = None,
        needs_more_thoughts: Annotated[bool | None, Field(validation_alias="needsMoreThoughts")] = None,
        session_id: Annotated[
            str | None,
            Field(validation_alias="sessionId", pattern=SESSION_ID, description="Resume or name a session."),
        ] = None,
        strategy: Annotated[
            Literal["auto", "single", "double", "triple", "full", "none"] | None,
            Field(description="How many hats analyse this thought (default auto)."),
        ] = None,
    ) -> Annotated[CallToolResult, ThoughtReply]:
        app = ctx.request_context.lifespan_context
        inp = ThoughtInput(
            thought=thought,
            thought_number=thought_number,
            total_thoughts=total_thoughts,
            next_thought_needed=next_thought_needed,
            is_revision=is_revision,
            revises_thought=revises_thought,
            branch_from_thought=branch_from_thought,
            branch_id=branch_id,
            needs_more_thoughts=needs_more_thoughts,
            session_id=session_id,
            strategy=strategy,
        )
        result = await app.thinking.think(inp, app.caller(ctx), _progress(ctx))
        return CallToolResult(
            content=[TextContent(type="text", text=result.markdown)],
            structured_content=result.structured(),
            is_error=result.is_error,
        )


def add_crash(server: ThinkingServer, settings: Settings) -> None:
    """`crash`: CRASH-style structured reasoning steps, in sessions of their own."""
    max_chars = settings.thinking_max_thought_chars

    @server.tool(
        name="crash",
        description=(
            "Record one structured reasoning step (CRASH): purpose (analysis, action, validation, exploration, "
            "hypothesis, correction, planning), context, thought, outcome, next_action, rationale. Optional "
            "confidence 0-1, revises_step, branch_from + branch_id, session_id, is_final_step."
        ),
        annotations=_writes(settings),
    )
    async def crash(
        step_number: Annotated[int, Field(ge=1, le=100_000)],
        estimated_total: Annotated[int, Field(ge=1, le=100_000)],
        purpose: Annotated[str, Field(min_length=1, max_length=64)],
        context: Annotated[str, Field(max_length=max_chars)],
        thought: Annotated[str, Field(min_length=1, max_length=max_chars)],
        outcome: Annotated[str, Field(max_length=max_chars)],
        next_action: Annotated[str | NextAction, Field(description="Text, or {tool?, action, parameters?}.")],
        rationale: Annotated[str, Field(max_length=max_chars)],
        ctx: Context[App, Any],
        confidence: Annotated[float | None, Field(ge=0, le=1)] = None,
        uncertainty_notes: Annotated[str | None, Field(max_length=max_chars)] = None,
        revises_step: Annotated[int | None, Field(ge=1)] = None,
        revision_reason: Annotated[str | None, Field(max_length=2000)] = None,
        branch_from: Annotated[int | None, Field(ge=1)] = None,
        branch_id: Annotated[str | None, Field(min_length=1, max_length=64, pattern=BRANCH_ID)] = None,
        branch_name: Annotated[str | None, Field(max_length=200)] = None,
        tools_used: Annotated[list[Annotated[str, Field(max_length=200)]] | None, Field(max_length=100)] = None,
        external_context: Annotated[dict[str, Any] | str | None, Field()] = None,
        dependencies: Annotated[list[int] | None, Field(max_length=100)] = None,
        session_id: Annotated[str | None, Field(pattern=SESSION_ID)] = None,
        is_final_step: bool | None = None,
    ) -> Annotated[CallToolResult, CrashReply]:
        app = ctx.request_context.lifespan_context
        if external_context is not None and len(json.dumps(external_context, default=str)) > max_chars:
            return _crash_failure("external_context is too large", f"Keep it under {max_chars} characters.")
        step = CrashStep(
            step_number=step_number,
            estimated_total=estimated_total,
            purpose=purpose,
            context=context,
            thought=thought,
            outcome=outcome,
            next_action=next_action,
            rationale=rationale,
            confidence=confidence,
            uncertainty_notes=uncertainty_notes,
            revises_step=revises_step,
            revision_reason=revision_reason,
            branch_from=branch_from,
            branch_id=branch_id,
            branch_name=branch_name,
            tools_used=tools_used,
            external_context=external_context,
            dependencies=dependencies,
            session_id=session_id,
            is_final_step=is_final_step,
        )
        reply = await app.crash.step(step, app.caller(ctx))
        text = json.dumps(reply, indent=2)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=reply)


def add_sequential_thinking(server: ThinkingServer, settings: Settings) -> None:
    """`sequential_thinking`: the minimal, stateless variant; it records nothing."""
    max_chars = settings.thinking_max_thought_chars

    @server.tool(
        name="sequential_thinking",
        description=(
            "Minimal, stateless step-by-step thinking: send each thought with its step and total_steps; "
            "next_action is CONTINUE, REVISE, or 'The final conclusion or answer'."
        ),
        # Stateless: it records nothing, so it is honestly read-only and idempotent.
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    )
    async def sequential_thinking(
        thought: Annotated[str, Field(min_length=1, max_length=max_chars)],
        step: Annotated[int, Field(ge=1, le=100_000)],
        total_steps: Annotated[int, Field(ge=1, le=100_000)],
        next_action: MINIMAL_NEXT,
        ctx: Context[App, Any],
        is_revision: bool | None = None,
    ) -> MinimalReply:
        app = ctx.request_context.lifespan_context
        if not thought.strip():
            raise InvalidThought("thought is empty: send the text of this step.")
        # `of` echoes total_steps as the minimal seed does, even when step is beyond it: this tool keeps no
        # state to correct, and the caller sees its own numbers back.
        app.trace.minimal(step, total_steps, thought, next_action, caller_of(ctx).principal)
        return MinimalReply(status="THOUGHT_RECORDED", step=step, of=total_steps, thought=thought, next=next_action)


TOOLS = {
    "sequentialthinking": add_sequentialthinking,
    "crash": add_crash,
    "sequential_thinking": add_sequential_thinking,
}


def add_session_resources(server: ThinkingServer, core: "_Core") -> None:
    """`thinking://sessions` (the caller's recent sessions), one session as JSON, one as a Markdown report."""

    @server.resource(
        "thinking://sessions",
        name="sessions",
        description="Recent sessions (JSON).",
        mime_type="application/json",
    )
    async def sessions_resource() -> str:
        # Static resources get no Context in mcp 2.x, hence the server-level core and the caller variable.
        rows = await core.store().sessions((_CALLER.get() or Caller()).principal, limit=200)
        listed = [
            {"id": s.id, "tool": s.tool, "created": iso(s.created), "updated": iso(s.updated), "entries": s.entries}
            for s in rows
        ]
        return json.dumps(listed, indent=2)

    @server.resource(
        "thinking://sessions/{session_id}",
        name="session",
        description="One session with every thought and its analysis (JSON).",
        mime_type="application/json",
    )
    async def session_resource(session_id: str, ctx: Context[App, Any]) -> str:
        return json.dumps(session_json(*await _existing(ctx, session_id)), indent=2)

    @server.resource(
        "thinking://sessions/{session_id}/report",
        name="session-report",
        description="One session as a Markdown report: each thought with its hat analyses and synthesis.",
        mime_type="text/markdown",
    )
    async def session_report(session_id: str, ctx: Context[App, Any]) -> str:
        return session_markdown(*await _existing(ctx, session_id))


def add_thinking_prompt(server: ThinkingServer) -> None:
    """The `sequential-thinking` prompt: a problem, and how to work through it with the tool."""

    @server.prompt(
        name="sequential-thinking",
        description="Work through a problem step by step with the sequentialthinking tool.",
    )
    def sequential_thinking_prompt(problem: str, context: str | None = None) -> str:
        extra = f"\n\nContext:\n{context}" if context else ""
        return (
            f"Work through this problem step by step.\n\nProblem:\n{problem}{extra}\n\n"
            "Use the `sequentialthinking` tool once per thought: start with thoughtNumber 1 and a rough "
            "totalThoughts, revise earlier thoughts (isRevision, revisesThought) when you find a mistake, branch "
            "(branchFromThought, branchId) to explore an alternative, and set nextThoughtNeeded to false only "
            "when you have an answer you would defend. Then give the final answer."
        )


class _Core:
    """The store and the cores, shared by every connection of one server and closed with the last of them.

    (Under stdio there is one; in-process test clients and HTTP may open several lifespans on one server.)
    """

    def __init__(self, settings: Settings, http: bool = False, processes: int = 1) -> None:
        self.settings = settings
        self.http = http
        self.processes = processes
        self._pruning: asyncio.Task[None] | None = None
        self._users = 0
        self._app: App | None = None
        self._opening: asyncio.Future[App] | None = None
        self._augmenter: Augmentation | None = None
        self.principals: Collection[str] | None = None  # under HTTP: who the limits file may name

    def reload(self, principals: Collection[str] | None = None) -> None:
        if principals is not None:
            self.principals = principals
        if self._app is not None:
            self._app.thinking.limits.reload(self.principals)  # the one table, shared with the crash tool

    def limits(self) -> Limits | None:
        """The limits in force (re-read on SIGHUP), for the web view's operators; None before the start."""
        return self._app.thinking.limits if self._app is not None else None

    def store(self) -> Store:
        if self._app is None:
            raise ThinkingError("the server is not running")
        return self._app.store

    @asynccontextmanager
    async def use(self) -> AsyncIterator[App]:
        # Opening awaits the store: count the user first, so a lifespan started meanwhile shares this one.
        self._users += 1
        try:
            if self._opening is None:
                self._opening = asyncio.ensure_future(self._open())
            self._app = await asyncio.shield(self._opening)
        except BaseException:
            self._users -= 1
            if self._users == 0:
                self._opening = None
            raise
        try:
            yield replace(self._app, process_key=uuid.uuid4().hex)
        finally:
            self._users -= 1
            if self._users == 0:
                app, augmenter, self._app, self._augmenter = self._app, self._augmenter, None, None
                self._opening = None
                if self._pruning is not None:
                    self._pruning.cancel()
                    self._pruning = None
                if augmenter is not None:
                    await augmenter.aclose()
                await drain()  # the charges of calls that ended a moment ago, before their store closes
                await app.store.close()
                _stop_tracing()

    async def _open(self) -> App:
        settings = self.settings
        trace = Trace(settings, http=self.http)
        # A bad limits file fails here, before anything is served.
        limits = Limits.from_settings(settings, self.principals)
        _start_tracing(settings)
        store = await open_store_for(settings, self.processes)
        # In the background: start-up never waits for the store's write lock (another process may hold it).
        self._pruning = asyncio.ensure_future(self._prune(store))
        augmenter, problem = build_augmenter(settings)
        if problem:
            log.warning("model augmentation is off: %s", problem)
        if augmenter is not None:
            augmenter.start()
        self._augmenter = augmenter
        return App(
            settings=settings,
            store=store,
            thinking=Thinking(settings, store, trace, augmenter, problem, limits),
            crash=Crash(settings, store, trace, augmenter, limits),
            trace=trace,
            process_key="",
        )

    async def _prune(self, store: Store) -> None:
        try:
            await prune(store, self.settings)
        except StoreError:  # e.g. another replica pruning at the same moment: the next prune catches up
            log.warning("pruning the session store at start-up failed; will try again later", exc_info=True)


def _start_tracing(settings: Settings) -> None:
    if settings.traces_endpoint and not telemetry.current().enabled:
        telemetry.install(telemetry.build_tracer(settings))


def _stop_tracing() -> None:
    """Flush and end the traces of this process (the batch still queued is sent now)."""
    tracer = telemetry.current()
    telemetry.install(None)
    try:
        tracer.shutdown()
    except Exception:  # an unreachable collector must not fail the shutdown
        log.warning("flushing the traces failed", exc_info=True)


def _progress(ctx: Context[App, Any]) -> ProgressFn:
    async def report(done: int, total: int, message: str) -> None:
        try:
            await ctx.report_progress(done, total, message)
        except Exception:  # a client gone mid-thought must not fail the thought
            log.debug("progress notification not delivered", exc_info=True)

    return report
