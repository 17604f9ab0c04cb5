"""The REST API fuzzed as an outsider fuzzes it: schemathesis, with every check it has, against
a served engine (``meaning-memory serve``: real processes, HTTP), from the schema the engine
serves, positive and negative cases, a fixed seed.

    python benchmarks/api_fuzz.py                     # --examples 100 per operation and mode
    python benchmarks/api_fuzz.py --smoke             # 2 per operation: that it still runs

An agent with a few memories of its own sends every request; rate limits are met by waiting
as each 429's Retry-After says. Prints, per operation, the requests sent, their statuses and the
failures by check, then the failures' total; ``--json OUT`` writes the same. What schemathesis
calls a failure is printed as it found it, with nothing filtered out: two kinds of case are
schema-valid data the engine refuses on purpose, and the table says how many of each there are
(a page cursor made up by the fuzzer: the engine takes only one of its pages gave; a NUL
character in a metadata key, which PostgreSQL cannot store and OpenAPI 3.0 cannot forbid).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from common import ROOT, add_smoke_option, write_json

sys.path.insert(0, str(ROOT))

from meaning_memory.tests.served import Served  # noqa: E402 (after the path)

SEED = 57


def served_engine(data_dir: Path) -> tuple[Served, str]:
    env = {**os.environ, "MM_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1"}
    env.pop("DATABASE_URL", None)
    served = Served(data_dir, env).start()
    token = served.agent("fuzz", "a1")
    for text in (
        "Orion Health renews its enterprise contract in March.",
        "Zephyr Logistics moved its renewal from March to June.",
        "Maria Lopez said Kestrel Analytics wants weekly reports.",
    ):
        served.call("POST", "/api/v1/memories", token, {"text": text, "scope": "private"})
    return served, token


def fuzz(base: str, token: str, examples: int, report: Path, smoke: bool) -> tuple[float, str]:
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "run",
        f"{base}/api/v1/schema/",
        "--checks",
        "all",
        "--mode",
        "all",
        "--max-examples",
        str(examples),
        "--seed",
        str(SEED),
        "--workers",
        "1",
        "--rate-limit",
        "auto",
        "--header",
        f"Authorization: Bearer {token}",
        "--report",
        "ndjson",
        "--report-ndjson-path",
        str(report),
        "--no-color",
        *(["--phases", "fuzzing"] if smoke else []),
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done.stdout + done.stderr


#: Rules the schema states in words only (OpenAPI 3.0 cannot: a relation between two fields,
#: "now", an opaque token, a character in a key), by the field a refusal names: what a
#: "schema-valid request rejected" is, when the engine's 400 names one of them.
IN_WORDS_ONLY = {
    "valid_until": "after valid_from (two fields)",
    "created_at": "not in the future (now)",
    "cursor": "a cursor one of its pages gave (an opaque token)",
    "metadata": "no NUL in a key (a key's characters)",
}


def read_report(path: Path) -> dict[str, Any]:
    """Per operation, the statuses of the requests sent and the failed checks; each failure's
    check and what the engine's answer said (its first field and message)."""
    statuses: dict[str, Counter[int]] = defaultdict(Counter)
    failures: dict[str, Counter[str]] = defaultdict(Counter)
    said: Counter[tuple[str, int, str]] = Counter()
    for line in path.read_text().splitlines():
        event = json.loads(line)
        recorder = event.get("ScenarioFinished", {}).get("recorder")
        if not recorder:
            continue
        label = recorder["label"]
        interactions = recorder.get("interactions", {})
        for interaction in interactions.values():
            if interaction.get("response"):
                statuses[label][interaction["response"]["status_code"]] += 1
        for case_id, checks in recorder.get("checks", {}).items():
            for check in checks:
                if check["status"] != "failure":
                    continue
                failures[label][check["name"]] += 1
                response = interactions.get(case_id, {}).get("response") or {}
                said[(check["name"], response.get("status_code", 0), _first(response))] += 1
    return {"statuses": statuses, "failures": failures, "said": said}


def _first(response: dict) -> str:
    """The first field and message of an answer's JSON body (or its detail)."""
    content = response.get("content") or {}
    try:
        text = base64.b64decode(content["$base64"]).decode() if "$base64" in content else ""
        body = json.loads(text) if text else {}
    except (ValueError, TypeError, KeyError):
        return "(not JSON)"
    if not isinstance(body, dict) or not body:
        return "(empty)"
    field, message = next(iter(body.items()))
    message = message[0] if isinstance(message, list) and message else message
    return f"{field}: {str(message)[:90]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=100, help="cases per operation and mode")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--data-dir", type=Path, help="the served engine's data directory")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.examples = 2
    print(f"`python benchmarks/api_fuzz.py {shlex.join(sys.argv[1:])}`\n")
    with tempfile.TemporaryDirectory() as scratch:
        data_dir = args.data_dir or Path(scratch) / "data"
        served, token = served_engine(data_dir)
        try:
            seconds, printed = fuzz(
                served.base, token, args.examples, Path(scratch) / "run.ndjson", args.smoke
            )
            found = read_report(Path(scratch) / "run.ndjson")
        finally:
            served.stop()
    statuses, failures, said = found["statuses"], found["failures"], found["said"]
    print(
        f"schemathesis, every check, positive and negative cases, seed {SEED}, "
        f"{args.examples} per operation and mode{', fuzzing phase only' if args.smoke else ''}: "
        f"{seconds:.0f} s\n"
    )
    print("| operation | requests | statuses | failed checks |")
    print("|---|---:|---|---|")
    for label in sorted(statuses):
        sent = sum(statuses[label].values())
        shown = ", ".join(f"{code}: {n}" for code, n in sorted(statuses[label].items()))
        failed = ", ".join(f"{name}: {n}" for name, n in failures[label].most_common()) or "—"
        print(f"| {label} | {sent} | {shown} | {failed} |")
    total = sum(sum(c.values()) for c in statuses.values())
    print(f"\n{total} requests. The failed checks, by what the engine answered:\n")
    print("| check | status | the answer said | a rule the schema states in words only |")
    print("|---|---:|---|---|")
    unexplained = 0
    for (check, status, answer), n in said.most_common():
        field = answer.split(":", 1)[0].rsplit(".", 1)[-1]
        words = IN_WORDS_ONLY.get(field, "") if check == "positive_data_acceptance" else ""
        unexplained += 0 if words else n
        print(f"| {check} | {status} | {answer} ({n}) | {words or '**no**'} |")
    print(f"\nFailed checks no rule in words explains: {unexplained}.")
    if not total:
        print(printed[-3000:])
    write_json(
        args.json,
        {
            "seed": SEED,
            "examples": args.examples,
            "seconds": seconds,
            "requests": total,
            "statuses": {k: dict(v) for k, v in statuses.items()},
            "failures": {k: dict(v) for k, v in failures.items()},
            "answers": [[*key, n] for key, n in said.most_common()],
        },
    )


if __name__ == "__main__":
    main()
