"""Pure host logic: what an MCP host decides about its servers without doing I/O."""
