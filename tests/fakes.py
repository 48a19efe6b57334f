"""Fake model providers for tests (filled in with the multi-agent core)."""
