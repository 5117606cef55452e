"""The real benchmark clients (AIPerf, GuideLLM from PyPI) in a virtualenv of their own.

They pin torch, transformers and many more that clash with the project's runtime pins, so they
never join ``requirements.lock``: ``ensure_venv()`` creates ``.venv-benchclients`` at the repo root
once (``python -m tests.clients.measurements.benchclients`` does it ahead, as ``.ci/run`` does) and
the tests reuse it. A failed install leaves no venv behind and the tests that need it skip, saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
VENV = Path(os.environ.get("FLEETPLAN_BENCHCLIENTS_VENV", ROOT / ".venv-benchclients"))
PINS = ("torch==2.13.0", "aiperf==0.13.0", "guidellm==0.8.1")
"""torch pinned to the CPU build this kind of machine keeps on disk (2.1 GB, ~2.5 min to install);
unpinned, guidellm pulls a CUDA build (6.5 GB, ~6 min)."""
READY = VENV / "fleetplan-pins.json"
"""Written last: the pins installed and how long the install took."""
INSTALL_TIMEOUT_S = 1800
RUN_TIMEOUT_S = 600

_TOKENIZER_SCRIPT = """
import sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
words = ["<unk>", "tok"] + [f"w{i}" for i in range(1000)]
tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
PreTrainedTokenizerFast(tokenizer_object=tok).save_pretrained(sys.argv[1])
"""
"""A whitespace word tokenizer (one token per word, ``<unk>`` an ordinary word so that decoding
keeps it): the clients count prompt and output tokens as the stand-in server does."""


def _bin(name: str) -> Path:
    return VENV / "bin" / name


def ready() -> bool:
    return READY.is_file() and json.loads(READY.read_text()).get("pins") == list(PINS)


def ensure_venv() -> str:
    """ "" when the clients are installed (installing them if needed), else why they cannot be."""
    if ready():
        return ""
    shutil.rmtree(VENV, ignore_errors=True)
    started = time.monotonic()
    try:
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, capture_output=True)
        subprocess.run(
            [str(_bin("pip")), "install", "--quiet", "--disable-pip-version-check", *PINS],
            check=True,
            capture_output=True,
            timeout=INSTALL_TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(VENV, ignore_errors=True)
        detail = getattr(exc, "stderr", b"") or b""
        return f"installing {', '.join(PINS)} failed: {exc} {detail.decode(errors='replace')[-500:]}"
    seconds = round(time.monotonic() - started, 1)
    READY.write_text(json.dumps({"pins": list(PINS), "install_seconds": seconds, "loadavg": _loadavg()}))
    return ""


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return ""


def write_tokenizer(directory: Path) -> Path:
    subprocess.run(
        [str(_bin("python")), "-c", _TOKENIZER_SCRIPT, str(directory)], check=True, timeout=RUN_TIMEOUT_S
    )
    return directory


def _run(command: list[str], log: Path) -> None:
    with log.open("w") as out:
        done = subprocess.run(
            command, stdout=out, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S, check=False
        )
    if done.returncode:
        raise RuntimeError(f"{command[0]} exited {done.returncode}: {log.read_text()[-2000:]}")


@dataclass(frozen=True, slots=True)
class Run:
    """One closed-loop benchmark run against ``url`` serving ``model``."""

    url: str
    model: str
    tokenizer: Path
    concurrency: int
    requests: int
    isl: int
    osl: int


def aiperf_command(run: Run, out: Path) -> list[str]:
    return [
        str(_bin("aiperf")), "profile", "--model", run.model, "--url", run.url, "--endpoint-type", "chat",
        "--streaming", "--tokenizer", str(run.tokenizer), "--concurrency", str(run.concurrency),
        "--request-count", str(run.requests), "--synthetic-input-tokens-mean", str(run.isl),
        "--synthetic-input-tokens-stddev", "0", "--output-tokens-mean", str(run.osl),
        "--output-tokens-stddev", "0", "--extra-inputs", "ignore_eos:true", "--random-seed", "1",
        "--output-artifact-dir", str(out), "--ui", "none",
    ]  # fmt: skip


def run_aiperf(run: Run, out: Path) -> Path:
    """AIPerf's profile export of a steady closed loop of ``run.concurrency`` users."""
    _run(aiperf_command(run, out), out.with_suffix(".log"))
    return out / "profile_export_aiperf.json"


def guidellm_scenario(run: Run, out: Path) -> dict[str, object]:
    return {
        "spec": {
            "backend": {"kind": "openai_http", "target": run.url, "model": run.model},
            "profile": {"kind": "concurrent", "streams": run.concurrency},
            "tokenizer": {"kind": "huggingface_auto", "model": str(run.tokenizer)},
            "data": [{"kind": "synthetic_text", "prompt_tokens": run.isl, "output_tokens": run.osl}],
            "constraints": [{"kind": "max_requests", "count": run.requests}],
            "outputs": [{"kind": "json", "path": str(out / "benchmarks.json")}],
        }
    }


def run_guidellm(run: Run, out: Path) -> Path:
    """GuideLLM's benchmarks JSON of a concurrent (closed-loop) run of ``run.concurrency`` streams."""
    out.mkdir(parents=True, exist_ok=True)
    scenario = out / "scenario.json"
    scenario.write_text(json.dumps(guidellm_scenario(run, out)))
    _run(
        [str(_bin("guidellm")), "run", "--scenario", str(scenario), "--disable-console"], out / "guidellm.log"
    )
    return out / "benchmarks.json"


if __name__ == "__main__":
    why = ensure_venv()
    sys.stdout.write((why or f"benchmark clients ready in {VENV}: {READY.read_text()}") + "\n")
    sys.exit(1 if why else 0)
