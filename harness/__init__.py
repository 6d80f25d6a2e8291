"""mcp-context-cost: measure what an MCP server's tool definitions cost in context tokens.

Layers, data flowing one way:
  core     the measurement rules of the spec (canonical JSON, tokenizer, counting, bands)
  probe    launching and talking to real servers (stdio and Streamable HTTP)
  db       the repository as a database: catalog, rotation, sweep, guard, history
  publish  badges, leaderboard, pages
  action   the GitHub Action entry point
"""

__version__ = "0.1.0"
METHODOLOGY_VERSION = "1.0"
