from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import include, path


def health(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


urlpatterns = [
    path("api/v1/", include("memories.api.urls")),
    path("admin/", admin.site.urls),
    path("healthz", health, name="health"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("readiness.urls")),
    path("", include("memories.urls")),
]
