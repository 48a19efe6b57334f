"""thinking-hats: an MCP server for step-by-step thinking, augmented by parallel thinking-hat agents."""

__version__ = "0.1.0"
