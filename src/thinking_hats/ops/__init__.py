"""Running the service: limits and the charges ledger, metrics, OpenTelemetry spans, logs, redaction of secrets, and
the per-thought console log on stderr.
"""
