"""The command line `thinking-hats`: serve, think, route, doctor, usage and sessions."""
