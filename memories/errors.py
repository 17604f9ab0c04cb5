"""The one family of domain errors. Each adapter translates them once (REST, MCP, CLI, pages)."""

from __future__ import annotations

#: The longest message (and field name) an error carries: one that quotes what a caller sent (an
#: id, a name, a field) never echoes more than this of it.
MESSAGE_MAX = 500


def bounded(text: str, limit: int = MESSAGE_MAX) -> str:
    """``text``, cut to ``limit`` characters with an ellipsis when it is longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class MemoryEngineError(Exception):
    code = "error"

    def __init__(self, message: str) -> None:
        message = bounded(message)
        super().__init__(message)
        self.message = message


class ValidationFailed(MemoryEngineError):
    """Bad input: ``errors`` maps each offending field to the rules it broke."""

    code = "invalid"

    def __init__(self, errors: dict[str, list[str]]) -> None:
        errors = {
            bounded(field, 100): [bounded(message) for message in messages]
            for field, messages in errors.items()
        }
        self.errors = errors
        super().__init__("; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in errors.items()))

    @classmethod
    def single(cls, field: str, message: str) -> ValidationFailed:
        return cls({field: [message]})


class MissingReference(ValidationFailed):
    """Input that is well formed but names something the caller cannot see (a memory to
    supersede or link to, an entity to filter by): each such field with its message, answered
    as a 404 (what a GET of that id would answer), not as a broken rule."""

    code = "missing"


class ConflictingInput(ValidationFailed):
    """Input that is well formed but clashes with what is stored (an alias another entity
    holds, a memory already forgotten): each such field with its message, answered as a 409."""

    code = "conflicting"


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
        self.kinds: dict[str, str] = {}

    def add(self, field: str, message: str) -> None:
        self.errors.setdefault(field, []).append(message)

    def check(self, field: str, message: str | None) -> None:
        """Add ``message`` (one of ``memories.rules``' answers) when there is one."""
        if message:
            self.add(field, message)

    def __contains__(self, field: str) -> bool:
        return field in self.errors

    def missing(self, field: str, message: str) -> None:
        """A well-formed reference to nothing the caller sees (see ``MissingReference``)."""
        self.add(field, message)
        self.kinds.setdefault(field, "missing")

    def conflict(self, field: str, message: str) -> None:
        """Well-formed input that clashes with what is stored (see ``ConflictingInput``)."""
        self.add(field, message)
        self.kinds.setdefault(field, "conflict")

    def raise_if_any(self) -> None:
        """ValidationFailed (400) when a rule is broken; otherwise MissingReference (404) when
        something named is not there, else ConflictingInput (409): the first thing to fix."""
        if not self.errors:
            return
        kinds = {self.kinds.get(field, "invalid") for field in self.errors}
        if "invalid" in kinds:
            raise ValidationFailed(self.errors)
        raise (MissingReference if "missing" in kinds else ConflictingInput)(self.errors)
