"""Helpers every layer uses: atomic writes, bounded reads, safe YAML, schemas, published paths and
the one escaping path for untrusted text (docs/ARCHITECTURE.md).
"""
