"""Typed readers for environment variables that fail loudly on a bad value.

Every reader also accepts ``NAME_FILE`` (a path whose contents are the value), the usual
convention for secrets mounted as files.
"""

from __future__ import annotations

import contextlib
import math
import os
from pathlib import Path


class EnvError(ValueError):
    pass


def _raw(name: str) -> str | None:
    file_name = os.environ.get(f"{name}_FILE")
    if file_name:
        return Path(file_name).read_text().strip()
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    return value


def envstr(name: str, default: str = "") -> str:
    value = _raw(name)
    return default if value is None else value


def envoptional(name: str) -> str | None:
    """The raw value, or None when the variable is unset or empty (its default then comes from
    elsewhere)."""
    return _raw(name)


def envbool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise EnvError(f"{name} must be a boolean (true/false, 1/0, yes/no, on/off), got {value!r}")


def envint(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise EnvError(f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and number < minimum:
        raise EnvError(f"{name} must be at least {minimum}, got {number}")
    if maximum is not None and number > maximum:
        raise EnvError(f"{name} must be at most {maximum}, got {number}")
    return number


def envfloat(
    name: str,
    default: float,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
) -> float:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise EnvError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise EnvError(f"{name} must be a finite number, got {value!r}")
    if minimum is not None and (number <= minimum if exclusive_minimum else number < minimum):
        bound = "greater than" if exclusive_minimum else "at least"
        raise EnvError(f"{name} must be {bound} {minimum}, got {number}")
    if maximum is not None and number > maximum:
        raise EnvError(f"{name} must be at most {maximum}, got {number}")
    return number


def envlist(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def envchoice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = envstr(name, default)
    if value not in choices:
        raise EnvError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


@contextlib.contextmanager
def web_process():
    """Load the settings of a web process (``MM_WEB_PROCESS``: see the settings), without
    leaving the variable to processes started later."""
    before = os.environ.get("MM_WEB_PROCESS")
    os.environ["MM_WEB_PROCESS"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["MM_WEB_PROCESS"]
        else:
            os.environ["MM_WEB_PROCESS"] = before
