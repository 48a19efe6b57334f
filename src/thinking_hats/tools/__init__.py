"""The cores of the three tools (sequentialthinking, crash and the session reports/exports): sessions, revisions and
branches, knowing nothing of MCP.
"""
