"""Prometheus metrics for `GET /metrics`: what the server does, by tool, provider, principal and store.

`Metrics` is the recorder the code calls; the base class records nothing (stdio, `think`, THINKING_METRICS=false)
and costs a method call. `PrometheusMetrics` records with prometheus-client, imported only then. Under
`serve --workers N` every worker writes its values to files in a directory the supervisor creates for the run
(PROMETHEUS_MULTIPROC_DIR, set by us in each worker) and `/metrics`, whichever worker answers it, adds up all of
them; the supervisor removes the directory at exit.

Every metric, with its labels, is listed in `METRICS` (docs/operations.md shows the same table).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

PREFIX = "thinking_hats"
_SECONDS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 45, 60, 120)
_STORE_SECONDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10)

# name -> (type, labels, help, buckets)
METRICS: dict[str, tuple[str, tuple[str, ...], str, tuple[float, ...]]] = {
    "thoughts": ("counter", ("tool", "strategy", "mode"), "Thoughts and CRASH steps answered.", ()),
    "thought_seconds": ("histogram", ("tool",), "Time to answer a thought, store and model calls included.", _SECONDS),
    "model_calls": ("counter", ("provider", "role", "outcome"), "Model calls (a role's call, retries included).", ()),
    "model_call_seconds": ("histogram", ("provider", "role"), "Time of one role's model call.", _SECONDS),
    "tokens": ("counter", ("principal", "kind"), "Model tokens by principal: input, output, cached_input.", ()),
    "limit_refusals": ("counter", ("principal", "limit"), "Thoughts recorded without analysis over a limit.", ()),
    "store_errors": ("counter", ("backend", "operation"), "Store transactions that failed.", ()),
    "store_transaction_seconds": ("histogram", ("backend", "operation"), "Store transaction time.", _STORE_SECONDS),
    "sessions_started": ("counter", ("tool",), "Sessions created.", ()),
}


class Metrics:
    """The recorder every part calls; this base records nothing (metrics off)."""

    def thought(self, tool: str, strategy: str, mode: str, seconds: float) -> None:
        return None

    def model_call(self, provider: str, role: str, outcome: str, seconds: float) -> None:
        return None

    def tokens(self, principal: str, input_tokens: int, output_tokens: int, cached: int) -> None:
        return None

    def refusal(self, principal: str, limit: str) -> None:
        return None

    def store(self, backend: str, operation: str, seconds: float, failed: bool) -> None:
        return None

    def session_started(self, tool: str) -> None:
        return None

    def exposition(self) -> tuple[bytes, str]:
        return b"", "text/plain"


class PrometheusMetrics(Metrics):
    """Owns the run's prometheus-client metrics; with `directory`, in multiprocess mode (one file set per worker)."""

    def __init__(self, directory: Path | None = None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram, values

        self.directory = directory
        if directory is not None:
            # prometheus-client finds its directory in this variable when a value is created and when collecting.
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)
            values.ValueClass = values.MultiProcessValue()  # type: ignore[no-untyped-call]
        else:
            values.ValueClass = values.MutexValue  # even if the variable is inherited: this process alone
        self.registry = CollectorRegistry(auto_describe=True)
        made: dict[str, Any] = {}
        for name, (kind, labels, help_text, buckets) in METRICS.items():
            full = f"{PREFIX}_{name}"
            if kind == "counter":
                made[name] = Counter(full, help_text, labels, registry=self.registry)
            else:
                made[name] = Histogram(full, help_text, labels, registry=self.registry, buckets=buckets)
        self._m = made

    def thought(self, tool: str, strategy: str, mode: str, seconds: float) -> None:
        self._m["thoughts"].labels(tool, strategy, mode).inc()
        self._m["thought_seconds"].labels(tool).observe(seconds)

    def model_call(self, provider: str, role: str, outcome: str, seconds: float) -> None:
        self._m["model_calls"].labels(provider, role, outcome).inc()
        self._m["model_call_seconds"].labels(provider, role).observe(seconds)

    def tokens(self, principal: str, input_tokens: int, output_tokens: int, cached: int) -> None:
        tokens = self._m["tokens"]
        for kind, amount in (("input", input_tokens), ("output", output_tokens), ("cached_input", cached)):
            if amount:
                tokens.labels(principal, kind).inc(amount)

    def refusal(self, principal: str, limit: str) -> None:
        self._m["limit_refusals"].labels(principal, limit).inc()

    def store(self, backend: str, operation: str, seconds: float, failed: bool) -> None:
        self._m["store_transaction_seconds"].labels(backend, operation).observe(seconds)
        if failed:
            self._m["store_errors"].labels(backend, operation).inc()

    def session_started(self, tool: str) -> None:
        self._m["sessions_started"].labels(tool).inc()

    def exposition(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4, CollectorRegistry, generate_latest

        # The text format every Prometheus version reads (our names need none of 1.0.0's escaping).
        if self.directory is None:
            return generate_latest(self.registry), CONTENT_TYPE_PLAIN_0_0_4
        from prometheus_client.multiprocess import MultiProcessCollector

        merged = CollectorRegistry()
        MultiProcessCollector(merged, path=str(self.directory))  # type: ignore[no-untyped-call]
        return generate_latest(merged), CONTENT_TYPE_PLAIN_0_0_4


_OFF = Metrics()
_current: Metrics = _OFF


def current() -> Metrics:
    return _current


def install(metrics: Metrics | None) -> None:
    """Make `metrics` the process's recorder (None: back to recording nothing)."""
    global _current
    _current = metrics if metrics is not None else _OFF
