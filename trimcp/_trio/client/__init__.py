"""The Trio MCP client: open_client, ClientSession and their helpers."""
