from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from meaning_memory.accounts import FirstRunLoginView
from meaning_memory.health import healthz, readyz
from meaning_memory.metrics import metrics
from memories.auth_forms import ThrottledPasswordReset

#: Signing in and out, and changing one's password; resetting a forgotten one only when the
#: engine can send email (``MM_EMAIL_HOST``), and throttled like logins.
accounts = [
    path("login/", FirstRunLoginView.as_view(), name="login"),
    path("logout/", auth.LogoutView.as_view(), name="logout"),
    path("password_change/", auth.PasswordChangeView.as_view(), name="password_change"),
    path(
        "password_change/done/",
        auth.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
]
if settings.EMAIL_HOST:
    accounts += [
        path(
            "password_reset/",
            auth.PasswordResetView.as_view(form_class=ThrottledPasswordReset),
            name="password_reset",
        ),
        path(
            "password_reset/done/",
            auth.PasswordResetDoneView.as_view(),
            name="password_reset_done",
        ),
        path(
            "reset/<uidb64>/<token>/",
            auth.PasswordResetConfirmView.as_view(),
            name="password_reset_confirm",
        ),
        path(
            "reset/done/", auth.PasswordResetCompleteView.as_view(), name="password_reset_complete"
        ),
    ]

urlpatterns = [
    path("api/v1/", include("memories.api.urls")),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="health"),
    path("readyz", readyz, name="ready"),
    path("metrics", metrics, name="metrics"),
    # Browsers ask for /favicon.ico whatever the page says: the dashboard's icon.
    path("favicon.ico", RedirectView.as_view(url=static("memories/favicon.svg"), permanent=True)),
    path("accounts/", include(accounts)),
    path("", include("consolidation.urls")),
    path("", include("readiness.urls")),
    path("", include("memories.urls")),
]
