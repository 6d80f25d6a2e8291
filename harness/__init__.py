"""mcp-context-cost: measure what an MCP server's tool definitions cost in context tokens.

Layers, each importing only those below it (docs/ARCHITECTURE.md): cli > action > audit > pages >
readings > db > probe > core > util.
"""

__version__ = "0.1.0"
METHODOLOGY_VERSION = "1.0"
