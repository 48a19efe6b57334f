"""OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set; off and free otherwise.

A span per thought or CRASH step (tool, strategy, principal, session, score), a child span per model call named
and attributed after the OpenTelemetry GenAI semantic conventions, and a span per store transaction. Spans carry
no client text unless THINKING_TRACE_TEXT is on. `Tracer` (the base) is what runs when tracing is off: it hands
out one shared do-nothing span and never imports opentelemetry. `OtelTracer` exports over OTLP/HTTP (protobuf)
in batches from a background thread; `shutdown()` flushes what is left.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from ..config import Settings


class Span:
    """A span being recorded; this base records nothing."""

    def set(self, key: str, value: Any) -> None:
        return None

    def error(self, kind: str, message: str = "") -> None:
        return None


_NO_SPAN = Span()


class Tracer:
    """Tracing off: every span is the shared do-nothing span."""

    enabled = False
    text = False  # whether spans may carry thought text

    def span(
        self, name: str, attributes: dict[str, Any] | None = None, client: bool = False
    ) -> AbstractContextManager[Span]:
        return _NULL

    def store_span(self, backend: str, operation: str) -> AbstractContextManager[Span]:
        return _NULL

    def shutdown(self) -> None:
        return None


class _Null(AbstractContextManager[Span]):
    def __enter__(self) -> Span:
        return _NO_SPAN

    def __exit__(self, *exc: object) -> None:
        return None


_NULL = _Null()


class _OtelSpan(Span):
    def __init__(self, span: Any) -> None:
        self._span = span

    def set(self, key: str, value: Any) -> None:
        if value is not None:
            self._span.set_attribute(key, value)

    def error(self, kind: str, message: str = "") -> None:
        from opentelemetry.trace import Status, StatusCode

        self._span.set_attribute("error.type", kind)
        self._span.set_status(Status(StatusCode.ERROR, message or kind))


class OtelTracer(Tracer):
    """Owns this process's tracer provider (not the global one: a process may run several servers, in tests)."""

    enabled = True

    def __init__(self, settings: Settings, endpoint: str) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from .. import __version__

        headers = settings.otel_exporter_otlp_traces_headers or settings.otel_exporter_otlp_headers
        self.text = settings.thinking_trace_text
        resource = Resource.create({"service.name": settings.otel_service_name, "service.version": __version__})
        self._provider = TracerProvider(resource=resource)
        exporter = OTLPSpanExporter(endpoint=endpoint, headers=_headers(headers.get_secret_value() if headers else ""))
        self._provider.add_span_processor(BatchSpanProcessor(exporter))
        self._tracer = self._provider.get_tracer("thinking_hats", __version__)

    def span(
        self, name: str, attributes: dict[str, Any] | None = None, client: bool = False
    ) -> AbstractContextManager[Span]:
        return self._span(name, attributes, client)

    @contextmanager
    def _span(self, name: str, attributes: dict[str, Any] | None, client: bool) -> Iterator[Span]:
        from opentelemetry.trace import SpanKind

        kind = SpanKind.CLIENT if client else SpanKind.INTERNAL
        clean = {k: v for k, v in (attributes or {}).items() if v is not None}
        with self._tracer.start_as_current_span(name, kind=kind, attributes=clean) as span:
            yield _OtelSpan(span)

    def store_span(self, backend: str, operation: str) -> AbstractContextManager[Span]:
        return self.span(f"store {operation}", {"db.system.name": backend, "db.operation.name": operation}, client=True)

    def shutdown(self) -> None:
        self._provider.shutdown()  # flushes the batch


def _headers(text: str) -> dict[str, str]:
    """OTEL_EXPORTER_OTLP_HEADERS: 'key=value,key2=value2', values percent-encoded (W3C baggage style)."""
    from urllib.parse import unquote

    found: dict[str, str] = {}
    for pair in text.split(","):
        key, sep, value = pair.partition("=")
        if sep and key.strip():
            found[unquote(key.strip()).lower()] = unquote(value.strip())
    return found


def build_tracer(settings: Settings) -> Tracer:
    endpoint = settings.traces_endpoint
    return OtelTracer(settings, endpoint) if endpoint else _OFF


_OFF = Tracer()
_current: Tracer = _OFF


def current() -> Tracer:
    return _current


def install(tracer: Tracer | None) -> None:
    global _current
    _current = tracer if tracer is not None else _OFF
