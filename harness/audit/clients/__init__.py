"""One module per client config format: ``CLIENT``, ``NAME``, ``DOCS``, ``READ_ON``, ``candidates(layout)``, ``parse(document, cfile, layout)``.
"""

from harness.audit.clients import (claude_code, claude_desktop, cline, codex_cli, continue_dev, cursor, gemini_cli,
                                   goose, kiro, vscode, windsurf, zed)

MODULES = (claude_code, claude_desktop, cursor, vscode, windsurf, gemini_cli, zed, kiro, goose, codex_cli, cline,
           continue_dev)
BY_ID = {module.CLIENT: module for module in MODULES}
