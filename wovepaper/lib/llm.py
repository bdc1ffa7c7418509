"""A language model behind an OpenAI-compatible chat-completions API, through the `openai`
client: the paper analysis asks it for JSON, the chat streams its answer.

Configured by settings (LLM_BASE_URL, LLM_MODEL, LLM_API_KEY); with no model configured
`configured()` is False and callers fall back to what they can compute without one. Every
call has its own timeout and no client-side retries: a Celery task retries on its own
schedule (honouring `Retry-After`), and a chat answer is better failed fast than late.

Failures come out as `ModelError` subclasses whose message can be shown to a reader: it never
carries the key or the provider's raw body.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.conf import settings

logger = logging.getLogger(__name__)


class ModelError(Exception):
    """The model gave no usable answer."""


class ModelTimeout(ModelError):
    pass


class ModelRateLimited(ModelError):
    def __init__(self, message: str, retry_after: float | None):
        super().__init__(message)
        self.retry_after = retry_after


class ModelUnavailable(ModelError):
    """The service could not be reached or answered with an error status."""


class ModelRefused(ModelError):
    """The model declined to answer (OpenAI's `refusal` field, or a content filter). A refusal
    costs tokens all the same: `usage` carries them when the service said."""

    def __init__(self, message: str, usage: Usage | None = None):
        super().__init__(message)
        self.usage = usage


@dataclass(frozen=True)
class ModelConfig:
    base_url: str
    model: str
    api_key: str
    timeout: float

    @classmethod
    def from_settings(cls, *, timeout: float | None = None) -> ModelConfig | None:
        if not (settings.LLM_BASE_URL and settings.LLM_MODEL):
            return None
        return cls(
            base_url=settings.LLM_BASE_URL,
            model=settings.LLM_MODEL,
            # Local OpenAI-compatible servers take any key; the client insists on one.
            api_key=settings.LLM_API_KEY or "no-key",
            timeout=timeout if timeout is not None else settings.LLM_TIMEOUT,
        )


def configured() -> bool:
    return ModelConfig.from_settings() is not None


def model_name() -> str:
    """The configured model's name, or "" without one."""
    config = ModelConfig.from_settings()
    return config.model if config else ""


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Completion:
    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""


def _client(config: ModelConfig):
    from openai import OpenAI  # imported on use: pages that never call a model skip it

    return OpenAI(
        api_key=config.api_key,
        base_url=config.base_url,
        timeout=config.timeout,
        max_retries=0,
    )


def _retry_after(headers) -> float | None:
    value = (headers or {}).get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _translated(exc: Exception) -> ModelError:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return ModelTimeout("the model did not answer in time")
    if isinstance(exc, openai.RateLimitError):
        retry_after = _retry_after(exc.response.headers if exc.response is not None else None)
        wait = f"; it asks us to wait {retry_after:g} s" if retry_after is not None else ""
        return ModelRateLimited(f"the model's service is rate-limiting us{wait}", retry_after)
    if isinstance(exc, openai.APIStatusError):
        return ModelUnavailable(f"the model's service answered HTTP {exc.status_code}")
    if isinstance(exc, openai.APIConnectionError):
        return ModelUnavailable("the model's service could not be reached")
    return ModelError(f"the model's answer could not be read ({type(exc).__name__})")


def _usage(raw) -> Usage:
    if raw is None:
        return Usage()
    return Usage(
        prompt_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
    )


def complete_json(
    messages: list[dict], *, config: ModelConfig, max_tokens: int = 800
) -> tuple[dict, Completion]:
    """One non-streamed completion asked for a JSON object; the object and the raw answer.

    JSON mode (`response_format`) is what OpenAI-compatible servers share; the prompt asks for
    the fields. An answer that is not a JSON object raises ModelError.
    """
    import openai

    try:
        response = _client(config).chat.completions.create(
            model=config.model,
            messages=messages,
            response_format={"type": "json_object"},
            max_tokens=max_tokens,
            temperature=0,
        )
    except openai.OpenAIError as exc:
        raise _translated(exc) from exc
    if not response.choices:
        raise ModelError("the model's answer had no choices")
    message = response.choices[0].message
    if getattr(message, "refusal", None):
        raise ModelRefused(str(message.refusal), _usage(response.usage))
    if response.choices[0].finish_reason == "content_filter":
        raise ModelRefused("the model's content filter withheld its answer", _usage(response.usage))
    completion = Completion(
        text=message.content or "", usage=_usage(response.usage), model=response.model or ""
    )
    try:
        data = json.loads(_without_fence(completion.text))
    except ValueError as exc:
        raise ModelError("the model's answer was not JSON") from exc
    if not isinstance(data, dict):
        raise ModelError("the model's answer was not a JSON object")
    return data, completion


def _without_fence(text: str) -> str:
    # Some servers wrap JSON mode answers in a ```json fence all the same.
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped


@dataclass
class StreamEvent:
    """A piece of a streamed answer: text to append, or (last) the usage and finish reason."""

    text: str = ""
    usage: Usage | None = None
    finish_reason: str | None = None
    refusal: str = ""


def stream_chat(
    messages: list[dict], *, config: ModelConfig, max_tokens: int = 700
) -> Iterator[StreamEvent]:
    """Stream a chat answer. Raises ModelError subclasses (also mid-stream, e.g. a timeout
    between two chunks: the client's read timeout applies to each read)."""
    import openai

    try:
        stream = _client(config).chat.completions.create(
            model=config.model,
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
            max_tokens=max_tokens,
            temperature=0.2,
        )
        usage: Usage | None = None
        finish: str | None = None
        refusal = ""
        for chunk in stream:
            if chunk.usage is not None:
                usage = _usage(chunk.usage)
            for choice in chunk.choices or []:
                delta = choice.delta
                if getattr(delta, "refusal", None):
                    refusal += delta.refusal
                if delta is not None and delta.content:
                    yield StreamEvent(text=delta.content)
                if choice.finish_reason:
                    finish = choice.finish_reason
    except openai.OpenAIError as exc:
        raise _translated(exc) from exc
    except Exception as exc:
        # httpx2's own read timeouts and resets surface here when the stream is cut mid-way.
        if "timeout" in type(exc).__name__.lower():
            raise ModelTimeout("the model stopped answering before it finished") from exc
        raise
    if refusal or finish == "content_filter":
        raise ModelRefused(refusal or "the model's content filter withheld its answer", usage)
    yield StreamEvent(usage=usage or Usage(), finish_reason=finish)
