"""Serving: the transports (`transport`: stdio and streamable HTTP, workers), the HTTP gate that authenticates
principals (`gate`) and stdin/stdout as asyncio pipes for the stdio transport (`pipes`)."""
