"""Release evidence: the checks' runs the project recorded for a release, shipped with the
package (``readiness/data/release_evidence.json``), so that a fresh install's readiness report
says what the release can claim, and on which data, before the install ran anything itself.

Each record is an ``Evidence`` row as the project's own ``stare-eval`` left it: the value, the
threshold, the data file's name, sha256 and size, when, the engine's version, and the versions
of the capability's code and settings it was measured for. The report judges it as any run:
``stale`` once the code or the configuration differ from what it was measured for. A check the
install ran itself counts by its own latest run: an install's evidence takes precedence.

``meaning-memory readiness --write-release FILE`` writes the file from a database's latest runs
(after ``stare-eval`` on the evaluation data).
"""

from __future__ import annotations

import functools
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings

from readiness.evidence import engine_version
from readiness.models import Evidence

#: The fields of an evidence row that a release record carries.
FIELDS = (
    "capability",
    "check_id",
    "kind",
    "metric",
    "threshold",
    "value",
    "passed",
    "dataset",
    "dataset_sha256",
    "dataset_bytes",
    "code_version",
    "config_version",
    "detail",
)
FORMAT = 1


def release_path() -> Path | None:
    path = settings.MM_RELEASE_EVIDENCE
    return Path(path) if path else None


@functools.cache
def _records(path: str, mtime: float) -> tuple[dict[str, Any], ...]:
    data = json.loads(Path(path).read_text())
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a release evidence file of format {FORMAT}")
    return tuple(data["evidence"])


def release_evidence() -> dict[str, Evidence]:
    """The release's latest run of each check, as unsaved ``Evidence`` rows marked
    ``release = True`` (none when there is no file)."""
    path = release_path()
    if path is None or not path.exists():
        return {}
    found = {}
    for record in _records(str(path), path.stat().st_mtime):
        evidence = Evidence(**{name: record[name] for name in FIELDS})
        evidence.created_at = datetime.fromisoformat(record["recorded_at"])
        evidence.release = True
        evidence.release_version = record.get("engine_version", "")
        found[evidence.check_id] = evidence
    return found


def write_release(path: Path) -> int:
    """The database's latest run of each check, as a release evidence file; how many."""
    latest = Evidence.objects.order_by("check_id", "-id").distinct("check_id")
    records = [
        {
            **{name: getattr(evidence, name) for name in FIELDS},
            "recorded_at": evidence.created_at.isoformat(),
            "engine_version": (evidence.run.engine_version if evidence.run else "")
            or engine_version(),
        }
        for evidence in latest
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"format": FORMAT, "evidence": records}, indent=1) + "\n")
    return len(records)
