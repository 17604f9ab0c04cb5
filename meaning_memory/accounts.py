"""Signing in, and what a first run tells the person who has just started the engine."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.views import LoginView

from memories.auth_forms import LoginForm

#: The command that makes the first user (the login page and ``serve``'s banner say it).
FIRST_USER_COMMAND = "meaning-memory createsuperuser"


def no_user_yet() -> bool:
    return not get_user_model().objects.exists()


class FirstRunLoginView(LoginView):
    """The login form (throttled: ``memories.throttle``); with no user in the database yet, the
    page says how to make the first one."""

    authentication_form = LoginForm

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        if no_user_yet():
            context["first_user_command"] = FIRST_USER_COMMAND
        return context
