"""Versions of a capability's code and configuration, and the recording of check runs."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from pathlib import Path
from typing import Any

from django.conf import settings

from readiness.models import EvaluationRun, Evidence
from readiness.registry import Capability, Check

ROOT = Path(__file__).resolve().parent.parent


def engine_version() -> str:
    """The installed package's version ("unknown" in a clone never installed)."""
    try:
        return importlib.metadata.version("meaning-memory")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def code_version(capability: Capability) -> str:
    """sha256 over the capability's modules: any change to them makes its evidence stale."""
    digest = hashlib.sha256()
    for module in sorted(capability.modules):
        digest.update(module.encode() + b"\0" + (ROOT / module).read_bytes())
    return digest.hexdigest()


def config_version(capability: Capability) -> str:
    """sha256 over the settings the capability depends on."""
    values = {name: repr(getattr(settings, name, None)) for name in sorted(capability.settings)}
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()


def meets(check: Check, value: float | None) -> bool:
    return value is not None and value >= check.threshold


def record(
    capability: Capability,
    check: Check,
    value: float | None,
    *,
    dataset: str = "",
    dataset_sha256: str = "",
    dataset_bytes: int | None = None,
    detail: dict[str, Any] | None = None,
    run: EvaluationRun | None = None,
) -> Evidence:
    """Store one run. Whether it passed is decided here, from the value and the threshold."""
    return Evidence.objects.create(
        capability=capability.key,
        check_id=check.id,
        kind=check.kind,
        metric=check.metric,
        threshold=check.threshold,
        value=value,
        passed=meets(check, value),
        dataset=dataset,
        dataset_sha256=dataset_sha256,
        dataset_bytes=dataset_bytes,
        run=run,
        code_version=code_version(capability),
        config_version=config_version(capability),
        detail=detail or {},
    )
