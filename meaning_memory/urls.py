from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from memories.auth_forms import LoginForm


def health(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


urlpatterns = [
    path("api/v1/", include("memories.api.urls")),
    path("admin/", admin.site.urls),
    path("healthz", health, name="health"),
    path("accounts/login/", LoginView.as_view(authentication_form=LoginForm), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("readiness.urls")),
    path("", include("memories.urls")),
]
