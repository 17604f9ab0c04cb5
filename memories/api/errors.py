"""The API's one translation of errors into responses.

Every error body is JSON. Bad input is a 400 whose body maps each field to the rules it broke,
``{"significance": ["must be between 0 and 1 (got 1.5)."]}``; anything else carries
``{"detail": "..."}``. A database that cannot answer now (no free connection, a statement
over its timeout, the server away) is a 503 with Retry-After.
"""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.exceptions import ParseError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memories.database_errors import unavailable
from memories.errors import MemoryEngineError, Unavailable
from memories.presenters import error_response


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    exc = unavailable(exc) or exc
    if isinstance(exc, MemoryEngineError):
        code, body = error_response(exc)
        response = Response(body, status=code)
        if isinstance(exc, Unavailable):
            response["Retry-After"] = str(exc.retry_after)
        return response
    if isinstance(exc, ParseError):
        return Response(
            {"body": [f"is not valid JSON: {exc.detail}"]}, status=status.HTTP_400_BAD_REQUEST
        )
    return drf_exception_handler(exc, context)
