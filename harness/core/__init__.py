"""The measurement rules: ``JSON.parse``/``JSON.stringify`` semantics, the o200k_base tokenizer,
counting, colour bands and the record type (docs/ARCHITECTURE.md).
"""
