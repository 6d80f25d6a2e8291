"""``audit``: what the MCP servers in a person's own client configs cost (issue #12).

Reads client configs, measures each distinct server once with the probe, and reads what the publish
layer writes (capture index, tool shape, divergence band) — never the other way round.
"""
