"""Anthropic's count of what a tools array adds to a request, through the ``anthropic`` SDK; the key is never
recorded. docs/METHODOLOGY.md, "Claude divergence".
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from harness.probe.redact import Secrets

if TYPE_CHECKING:
    from anthropic.types import MessageParam

MODEL = "claude-sonnet-4-5-20250929"  # pinned: a dated snapshot id, never an alias that moves
# one token of user text; the same in both requests
MESSAGE: tuple[MessageParam, ...] = ({"role": "user", "content": "x"},)
KEY_ENV = "ANTHROPIC_API_KEY"
MAX_RETRIES = 4
TIMEOUT_SECONDS = 60.0


class MissingKey(RuntimeError):
    """``ANTHROPIC_API_KEY`` is not set (or empty)."""


class CountFailed(RuntimeError):
    """No count after the SDK's retries; ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class ClaudeCounter:
    """Counts through one SDK client. Raises :class:`MissingKey` when no key is available."""

    def __init__(self, model: str = MODEL, *, api_key: str | None = None, base_url: str | None = None,
                 max_retries: int = MAX_RETRIES, timeout: float = TIMEOUT_SECONDS):
        import anthropic  # heavy, and needed only by the divergence command

        key = api_key if api_key is not None else os.environ.get(KEY_ENV, "")
        if not key.strip():
            raise MissingKey(f"{KEY_ENV} is not set: the Claude divergence is counted by Anthropic's "
                             "count_tokens endpoint, which needs an API key")
        self.model = model
        self._redactor = Secrets([key])
        # An explicit api_key keeps the SDK from consulting profiles or federation settings.
        self._client = anthropic.Anthropic(api_key=key, base_url=base_url, max_retries=max_retries, timeout=timeout)

    def close(self) -> None:
        self._client.close()

    def input_tokens(self, tools: list | None = None) -> int:
        """``input_tokens`` of the minimal request, with projected ``tools`` or without. Raises
        :class:`CountFailed`."""
        import anthropic  # a slow import, paid only when a count is asked for

        try:
            result = self._client.messages.count_tokens(model=self.model, messages=list(MESSAGE),
                                                        tools=anthropic.omit if tools is None else tools)
        except anthropic.APIStatusError as exc:
            raise CountFailed(self._clean(f"HTTP {exc.status_code}: {_message(exc)}"), exc.status_code) from None
        except anthropic.APIError as exc:
            raise CountFailed(self._clean(f"{type(exc).__name__}: {exc}")) from None
        except (ValueError, TypeError, UnicodeError) as exc:  # a value the request body cannot carry
            raise CountFailed(self._clean(f"request not sent: {type(exc).__name__}: {exc}")) from None
        value = getattr(result, "input_tokens", None)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise CountFailed(f"count_tokens answered without a whole input_tokens ({value!r})")
        return value

    def _clean(self, text: str) -> str:
        return (self._redactor.text(text) or "")[:500]


def tools_delta(with_tools: int, without_tools: int) -> int:
    """The tokens the tools add to the request: the subtraction of tools-delta/v1."""
    return with_tools - without_tools


def _message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            kind = error.get("type")
            return f"{kind}: {error['message']}" if isinstance(kind, str) else error["message"]
    return str(getattr(exc, "message", "") or exc)
