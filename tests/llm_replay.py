"""Recorded chat-completion answers (tests/fixtures/llm, see PROVENANCE.md there), replayed by
pytest-httpserver on 127.0.0.1 so the real `openai` client reads them over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from werkzeug import Response

LLM_FIXTURES = Path(__file__).parent / "fixtures" / "llm"
# Framing is the local server's business: recorded framing headers would lie about its body.
FRAMING = {"content-length", "transfer-encoding", "connection", "content-encoding"}


def interaction(cassette: str, index: int) -> dict:
    """One request/response pair of a VCR cassette."""
    data = yaml.safe_load((LLM_FIXTURES / cassette).read_text())
    return data["interactions"][index]


def recorded_response(cassette: str, index: int) -> Response:
    response = interaction(cassette, index)["response"]
    headers = {
        name: values[0] if isinstance(values, list) else values
        for name, values in response.get("headers", {}).items()
        if name.lower() not in FRAMING
    }
    if "parsed_body" in response:
        body = json.dumps(response["parsed_body"])
    else:
        body = response["body"]["string"]
    return Response(body, status=response["status"]["code"], headers=headers)


def recorded_json(path: str) -> dict:
    return json.loads((LLM_FIXTURES / path).read_text())
