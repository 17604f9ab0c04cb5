"""What every answer gets whatever view made it: JSON errors under ``/api/`` (``ApiErrorsAsJson``;
a database that cannot answer now is a 503 with Retry-After on every page; a page's service
that refuses is Django's 403 or 404 page) and the security headers (``SecurityHeaders``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from http import HTTPStatus

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found, permission_denied

from memories.database_errors import unavailable
from memories.errors import MemoryEngineError
from memories.presenters import error_status

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


class ApiErrorsAsJson:
    """Every answer under ``/api/`` is JSON, whatever the status and whoever made it (Django's
    own 404, 400 and 500 pages, a host not allowed, a CSRF refusal, a body over the size
    limit), in the shape of the API's other errors: ``{"detail": "..."}``. It sits outside the
    middleware that can refuse a request (the host check, CSRF), and keeps the headers they set."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not is_api(request) or response.status_code < 400:
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        status = response.status_code
        answer = JsonResponse({"detail": _phrase(status)}, status=status)
        for header, value in response.items():  # every header the middleware inside set
            if header.lower() not in ("content-type", "content-length"):
                answer[header] = value
        return answer

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        trouble = unavailable(exception)
        if trouble is not None:  # the database cannot answer now: any page, any view
            logger.warning("%s %s: %s", request.method, request.path, exception)
            if is_api(request):
                answer = JsonResponse({"detail": trouble.message}, status=503)
            else:
                answer = HttpResponse(
                    f"Service unavailable: {trouble.message}\n",
                    status=503,
                    content_type="text/plain; charset=utf-8",
                )
            answer["Retry-After"] = str(trouble.retry_after)
            return answer
        if is_api(request) and isinstance(exception, RequestDataTooBig):
            return JsonResponse({"detail": body_too_large()}, status=413)
        if not is_api(request) and isinstance(exception, MemoryEngineError):
            # A page's service refused (``require_role``: a role too low, a workspace or object
            # the user does not see): Django's own 403 or 404 page, as the one table says.
            status = error_status(exception)
            if status == 403:
                return permission_denied(request, PermissionDenied(exception.message))
            if status == 404:
                return page_not_found(request, Http404(exception.message))
        return None


def body_too_large() -> str:
    return (
        f"the body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes "
        "(MM_MAX_BODY_BYTES); send fewer memories per bulk request."
    )


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase + "."
    except ValueError:
        return f"HTTP {status}."


#: The pages' Content-Security-Policy: scripts, styles and everything else from this site only,
#: none inline (the dashboard's are files); no plugins, no framing, forms post here only.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
#: The API's browsable documentation (Swagger UI, ReDoc) starts its viewers with inline
#: scripts of its own: these pages get the policy without that restriction.
DOCS_PREFIXES = ("/api/v1/schema/swagger/", "/api/v1/schema/redoc/")
DOCS_POLICY = CONTENT_SECURITY_POLICY.replace(
    "script-src 'self'", "script-src 'self' 'unsafe-inline'"
).replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"


class SecurityHeaders:
    """Content-Security-Policy and Permissions-Policy on every answer, and ``Cache-Control:
    no-store`` on every one but the static files' (a page or an answer holds a workspace's
    memories: no browser, proxy or back button keeps a copy). (Django's own middleware
    sends X-Content-Type-Options, Referrer-Policy, Cross-Origin-Opener-Policy and
    X-Frame-Options; ``MM_HTTPS`` makes the cookies secure.)"""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        docs = request.path.startswith(DOCS_PREFIXES)
        response.setdefault(
            "Content-Security-Policy", DOCS_POLICY if docs else CONTENT_SECURITY_POLICY
        )
        response.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        if not request.path.startswith("/" + settings.STATIC_URL.lstrip("/")):
            response.setdefault("Cache-Control", "no-store")
        return response
