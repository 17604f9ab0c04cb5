"""The one family of domain errors. Each adapter translates them once (REST, MCP, CLI, pages)."""

from __future__ import annotations


class MemoryEngineError(Exception):
    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ValidationFailed(MemoryEngineError):
    """Bad input: ``errors`` maps each offending field to the rules it broke."""

    code = "invalid"

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in errors.items()))

    @classmethod
    def single(cls, field: str, message: str) -> ValidationFailed:
        return cls({field: [message]})


class NotFound(MemoryEngineError):
    """Unknown, or not visible to the caller: the two are never told apart."""

    code = "not_found"


class Forbidden(MemoryEngineError):
    """Seen, but the caller's role does not allow the change (a viewer curating)."""

    code = "forbidden"


class Conflict(MemoryEngineError):
    """The change waits on another in progress (a consolidation run of the same workspace)."""

    code = "conflict"


class Unavailable(MemoryEngineError):
    """The engine cannot answer now (the database is busy, too slow or away): try again after
    ``retry_after`` seconds."""

    code = "unavailable"

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Errors:
    """Collects field errors so a caller sees every problem at once, then raises."""

    def __init__(self) -> None:
        self.errors: dict[str, list[str]] = {}

    def add(self, field: str, message: str) -> None:
        self.errors.setdefault(field, []).append(message)

    def check(self, field: str, message: str | None) -> None:
        """Add ``message`` (one of ``memories.rules``' answers) when there is one."""
        if message:
            self.add(field, message)

    def __contains__(self, field: str) -> bool:
        return field in self.errors

    def raise_if_any(self) -> None:
        if self.errors:
            raise ValidationFailed(self.errors)
