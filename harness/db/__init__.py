"""The repository as a database: the catalog, rotation, sweep, history and the publish transaction
(docs/ARCHITECTURE.md).
"""
