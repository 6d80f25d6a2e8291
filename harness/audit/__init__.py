"""``audit``: what the MCP servers in a person's own client configs cost, and who pays it (docs/AUDIT.md)."""
