"""The MCP connection state machine: one Connection, both roles, both eras."""
