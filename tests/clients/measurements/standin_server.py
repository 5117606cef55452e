"""A stand-in OpenAI-compatible streaming server whose timing is known: every request's first
token comes ``ttft_s`` after the request arrived and each next one ``tpot_s`` later (on absolute
deadlines, so a late wake-up does not accumulate). Benchmark clients (AIPerf, GuideLLM) measure it
as they would measure vLLM; the tests then know what they should have measured.

Tokens are the word ``tok`` separated by spaces: the whitespace tokenizer of ``tokenizer_dir``
(written by ``benchclients.write_tokenizer``) counts one token per word on both sides.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_OUTPUT_TOKENS = 64


@dataclass(frozen=True, slots=True)
class Timing:
    ttft_s: float
    tpot_s: float


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the tests read the clients' results, not the server's access log."""

    def _send_json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": self.server.model, "object": "model"}]})
        else:
            self._send_json(200, {"status": "ok"})

    def do_POST(self) -> None:
        arrived = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        chat = self.path.rstrip("/").endswith("chat/completions")
        tokens = int(body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_OUTPUT_TOKENS)
        prompt = _prompt_tokens(body)
        if not body.get("stream"):
            self._complete(arrived, chat, tokens, prompt)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        timing = self.server.timing
        for i in range(tokens):
            _sleep_until(arrived + timing.ttft_s + i * timing.tpot_s)
            text = "tok" if i == 0 else " tok"
            last = i == tokens - 1
            self._chunk(_event(self.server.model, chat, text, "length" if last else None))
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {"prompt_tokens": prompt, "completion_tokens": tokens, "total_tokens": prompt + tokens}
            self._chunk(
                {
                    "id": "standin",
                    "object": _object(chat),
                    "model": self.server.model,
                    "choices": [],
                    "usage": usage,
                }
            )
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")

    def _complete(self, arrived: float, chat: bool, tokens: int, prompt: int) -> None:
        timing = self.server.timing
        _sleep_until(arrived + timing.ttft_s + (tokens - 1) * timing.tpot_s)
        text = " ".join(["tok"] * tokens)
        choice: dict[str, Any] = {"index": 0, "finish_reason": "length"}
        choice |= {"message": {"role": "assistant", "content": text}} if chat else {"text": text}
        usage = {"prompt_tokens": prompt, "completion_tokens": tokens, "total_tokens": prompt + tokens}
        self._send_json(
            200,
            {
                "id": "standin",
                "object": "chat.completion" if chat else "text_completion",
                "model": self.server.model,
                "choices": [choice],
                "usage": usage,
            },
        )

    def _chunk(self, event: dict[str, Any]) -> None:
        self._write_chunk(b"data: " + json.dumps(event).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _object(chat: bool) -> str:
    return "chat.completion.chunk" if chat else "text_completion"


def _event(model: str, chat: bool, text: str, finish: str | None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
    choice |= {"delta": {"content": text}} if chat else {"text": text}
    return {
        "id": "standin",
        "object": _object(chat),
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
    }


def _prompt_tokens(body: dict[str, Any]) -> int:
    if "messages" in body:
        parts = []
        for message in body["messages"]:
            content = message.get("content")
            if isinstance(content, list):
                parts += [c.get("text", "") for c in content if isinstance(c, dict)]
            else:
                parts.append(str(content or ""))
        return sum(len(p.split()) for p in parts)
    prompt = body.get("prompt", "")
    return len(prompt.split()) if isinstance(prompt, str) else len(prompt)


def _sleep_until(deadline: float) -> None:
    left = deadline - time.monotonic()
    if left > 0:
        time.sleep(left)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    timing: Timing
    model: str


class StandinServer:
    """``with StandinServer(Timing(0.2, 0.02), "model") as server: server.url``."""

    def __init__(self, timing: Timing, model: str) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.timing = timing
        self._server.model = model
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> StandinServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
