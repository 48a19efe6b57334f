"""OpenTelemetry traces, received by a real OTLP/HTTP endpoint in the test: what the exporter really sends to
/v1/traces is decoded with opentelemetry-proto and the spans are checked (a span per thought, a GenAI client span
per model call under it, a span per store transaction), with no thought text unless asked for; and with no
OTEL_* variable set, the OpenTelemetry SDK and exporter are never imported."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from fakes import FakeLLM
from thinking_hats.analysis import ThoughtContext
from thinking_hats.routing.router import route
from thinking_hats.server import build_server

TOOL = "sequentialthinking"
SECRET_TEXT = "Should we tell the board about the breach before the audit?"


@dataclass
class Span:
    name: str
    kind: int
    span_id: bytes
    parent: bytes
    attributes: dict[str, Any]
    status: int
    resource: dict[str, Any]


@dataclass
class Receiver:
    """An OTLP/HTTP traces endpoint: decodes each ExportTraceServiceRequest it is sent."""

    url: str
    spans: list[Span] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            assert self.path == "/v1/traces" and self.headers["content-type"] == "application/x-protobuf"
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            got.raw.append(body)
            got.headers.append({k.lower(): v for k, v in self.headers.items()})
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope in resource_spans.scope_spans:
                    for s in scope.spans:
                        attributes = {a.key: _value(a.value) for a in s.attributes}
                        got.spans.append(
                            Span(s.name, s.kind, s.span_id, s.parent_span_id, attributes, s.status.code, resource)
                        )
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    got.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield got
    server.shutdown()
    server.server_close()


def call(text: str, number: int = 1, **extra: Any) -> dict[str, Any]:
    return {"thought": text, "thoughtNumber": number, "totalThoughts": 3, "nextThoughtNeeded": True,
            "sessionId": "traced", **extra}  # fmt: skip


SPAN_KIND_INTERNAL, SPAN_KIND_CLIENT, STATUS_ERROR = 1, 3, 2


async def test_a_thought_is_traced_with_genai_model_call_spans_and_store_spans_and_no_text(
    openai_llm: FakeLLM, receiver: Receiver, tmp_path: Path
) -> None:
    settings = openai_llm.settings(
        thinking_data_dir=tmp_path,
        otel_exporter_otlp_endpoint=receiver.url,
        otel_exporter_otlp_headers="x-collector-key=k%20ey,tenant=team-a",
        otel_service_name="thinking-team",
    )
    # A hat the route runs, whichever the learned router ranks second.
    hat = route(ThoughtContext(thought=SECRET_TEXT, thought_number=1, total_thoughts=1), 0.5, "double").hats[1]
    openai_llm.enqueue(hat, 401)
    async with Client(build_server(settings)) as client:
        reply = await client.call_tool(TOOL, call(SECRET_TEXT, strategy="double"))

    assert receiver.spans, "the exporter sent nothing"
    assert receiver.headers[0]["x-collector-key"] == "k ey" and receiver.headers[0]["tenant"] == "team-a"
    [thought] = [s for s in receiver.spans if s.name == TOOL]
    structured = reply.structured_content
    assert thought.kind == SPAN_KIND_INTERNAL and thought.resource["service.name"] == "thinking-team"
    assert thought.attributes["thinking_hats.tool"] == TOOL
    assert thought.attributes["thinking_hats.principal"] == "local"
    assert thought.attributes["thinking_hats.session_id"] == "traced"
    assert thought.attributes["thinking_hats.strategy"] == "double"
    assert thought.attributes["thinking_hats.score"] == structured["analysis"]["complexity"]["score"]

    model_calls = [s for s in receiver.spans if s.name.startswith("chat ")]
    assert len(model_calls) == 3  # two hats and the synthesis
    for span in model_calls:
        assert span.kind == SPAN_KIND_CLIENT and span.parent == thought.span_id
        assert span.attributes["gen_ai.operation.name"] == "chat"
        assert span.attributes["gen_ai.provider.name"] == "openai"
        assert span.name == f"chat {span.attributes['gen_ai.request.model']}"
    failed = [s for s in model_calls if s.attributes["gen_ai.agent.name"] == hat]
    assert failed[0].status == STATUS_ERROR and failed[0].attributes["error.type"] == "401"
    ok = [s for s in model_calls if s.status != STATUS_ERROR]
    assert len(ok) == 2
    assert all(s.attributes["gen_ai.usage.input_tokens"] > 0 and s.attributes["gen_ai.usage.output_tokens"] > 0
               for s in ok)  # fmt: skip

    store = {s.name: s for s in receiver.spans if s.name.startswith("store ")}
    assert {"store read", "store commit"} <= set(store)
    assert store["store commit"].parent == thought.span_id
    assert store["store commit"].attributes["db.system.name"] == "sqlite"

    sent = b"".join(receiver.raw)
    assert SECRET_TEXT.encode() not in sent and b"board" not in sent  # no thought text in any span


async def test_thought_text_goes_in_the_span_only_when_asked(
    openai_llm: FakeLLM, receiver: Receiver, tmp_path: Path
) -> None:
    settings = openai_llm.settings(
        thinking_data_dir=tmp_path,
        otel_exporter_otlp_traces_endpoint=f"{receiver.url}/v1/traces",
        thinking_trace_text=True,
    )
    async with Client(build_server(settings)) as client:
        await client.call_tool("crash", {"step_number": 1, "estimated_total": 1, "purpose": "analysis",
                                         "context": "c", "thought": SECRET_TEXT, "outcome": "o", "next_action": "n",
                                         "rationale": "To r"})  # fmt: skip
    [step] = [s for s in receiver.spans if s.name == "crash"]
    assert step.attributes["thinking_hats.thought"] == SECRET_TEXT


def test_without_otel_settings_opentelemetry_is_never_imported(tmp_path: Path) -> None:
    script = """
import asyncio, json, sys
from mcp import Client
from thinking_hats.config import Settings
from thinking_hats.server import build_server

async def main():
    async with Client(build_server(Settings(thinking_data_dir=sys.argv[1]))) as client:
        await client.call_tool("sequentialthinking", {"thought": "t", "thoughtNumber": 1, "totalThoughts": 1,
                                                       "nextThoughtNeeded": False})
asyncio.run(main())
loaded = ("opentelemetry.sdk", "opentelemetry.exporter", "opentelemetry.proto", "prometheus_client")
print(json.dumps(sorted(m for m in sys.modules if m.startswith(loaded))))
"""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, env=env,
                         timeout=120, check=True)  # fmt: skip
    # (mcp itself imports the opentelemetry API, whose spans go nowhere without an SDK; ours never loads the SDK.)
    assert json.loads(out.stdout) == []  # nor prometheus_client: stdio serves no /metrics
