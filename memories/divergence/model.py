"""The divergence detector's optional model: any OpenAI-compatible ``POST {url}/chat/completions``
endpoint, asked only when ``MM_DIVERGENCE_MODEL_URL`` is set.

The model is asked whether two statements can both be true, and answers with a JSON object
``{"contradiction": <probability 0-1>, "reason": "…"}``. Its probability joins the rules and
the geometry in ``memories.divergence.detectors.assess``; its reason is kept in the evidence.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from django.conf import settings

from memories.errors import MemoryEngineError
from memories.remote import post_json

PROMPT = (
    "Two statements were recorded by different sources about the same subject. Do they "
    "contradict each other, so that both cannot be true at once? Answer with one JSON object "
    'and nothing else: {"contradiction": <probability from 0 to 1>, "reason": "<one short '
    'sentence>"}.'
)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class DivergenceModelError(MemoryEngineError):
    code = "divergence_model_failed"


@dataclass(frozen=True)
class ModelAnswer:
    probability: float
    reason: str


def configured() -> bool:
    return bool(settings.MM_DIVERGENCE_MODEL_URL)


def ask(first: str, second: str) -> ModelAnswer:
    """The model's probability that ``first`` and ``second`` contradict each other."""
    url = settings.MM_DIVERGENCE_MODEL_URL.rstrip("/") + "/chat/completions"
    body = {
        "model": settings.MM_DIVERGENCE_MODEL,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": f"Statement 1: {first}\nStatement 2: {second}"},
        ],
    }
    payload = post_json(
        url,
        body,
        api_key=settings.MM_DIVERGENCE_MODEL_API_KEY,
        timeout=settings.MM_DIVERGENCE_MODEL_TIMEOUT,
        error=DivergenceModelError,
        what="divergence model",
    )
    try:
        content = payload["choices"][0]["message"]["content"]
        answer = json.loads(_OBJECT.search(content).group(0))
        probability = float(answer["contradiction"])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise DivergenceModelError("divergence model returned an unexpected body") from exc
    if not 0 <= probability <= 1:
        raise DivergenceModelError(f"divergence model gave a probability of {probability}")
    return ModelAnswer(probability=probability, reason=str(answer.get("reason", ""))[:500])
