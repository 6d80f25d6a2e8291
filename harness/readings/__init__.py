"""The readings beside the headline that are taken apart from a measurement, each in its own run file
under ``results/``: the Claude divergence (``claude``), the mcp-tokens cross-check (``mcp_tokens``) and
the capability probe (``capability_probe``). ``store`` is the one way in and out of their run files
(``read``, ``write``, ``merge_rows``, ``FILES``); the pages read them only through it. docs/ARCHITECTURE.md,
"The readings beside the headline".
"""
