"""The GitHub Action (docs/ACTION.md): ``main`` runs it; ``entrypoint.py`` at the repository root calls it."""

