"""Launching a server and talking MCP to it: isolation, the server's environment, statuses, retries,
redaction (docs/ARCHITECTURE.md).
"""
