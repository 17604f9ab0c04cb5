from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.urls import include, path

from meaning_memory.health import healthz, readyz
from meaning_memory.metrics import metrics
from memories.auth_forms import LoginForm

urlpatterns = [
    path("api/v1/", include("memories.api.urls")),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="health"),
    path("readyz", readyz, name="ready"),
    path("metrics", metrics, name="metrics"),
    path("accounts/login/", LoginView.as_view(authentication_form=LoginForm), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("consolidation.urls")),
    path("", include("readiness.urls")),
    path("", include("memories.urls")),
]
