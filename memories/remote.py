"""One JSON request to a remote endpoint (an OpenAI-compatible API), its failures as the
caller's engine error."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from memories.errors import MemoryEngineError


def post_json(
    url: str,
    payload: dict[str, Any],
    *,
    api_key: str,
    timeout: float,
    error: type[MemoryEngineError],
    what: str,
) -> Any:
    """POST ``payload`` as JSON (with a bearer token when ``api_key``) and return the decoded
    answer; an HTTP error, a connection failure, a timeout or a body that is not JSON raises
    ``error`` naming ``what``."""
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:300].decode(errors="replace")
        raise error(f"{what} answered {exc.code}: {detail}") from exc
    except (urllib.error.URLError, TimeoutError, json.JSONDecodeError) as exc:
        raise error(f"{what} {url} failed: {exc}") from exc
