"""The dashboard's and the admin's login forms, and the password reset's (only served when the
engine has email), throttled (``memories.throttle``)."""

from __future__ import annotations

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm

from memories import throttle


class ThrottledLogin:
    def clean(self):
        username = self.data.get("username", "") or ""
        address = (self.request.META.get("REMOTE_ADDR", "") if self.request else "") or ""
        wait = throttle.locked_for(username, address)
        if wait:
            minutes = -(-wait // 60)
            raise forms.ValidationError(
                f"Too many failed logins: try again in {minutes} minute"
                f"{'s' if minutes != 1 else ''}.",
                code="locked",
            )
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            throttle.failed(username, address)
            raise
        throttle.succeeded(username)
        return cleaned


class LoginForm(ThrottledLogin, AuthenticationForm):
    pass


class AdminLoginForm(ThrottledLogin, AdminAuthenticationForm):
    pass


class ThrottledPasswordReset(PasswordResetForm):
    """Every reset asked counts as a failed login of the address (and of ``reset:<email>``):
    past the brake's limit no mail is sent, and the page says what it says for any address
    (whether the email is known is never told)."""

    def save(self, *args, request=None, **kwargs):
        address = (request.META.get("REMOTE_ADDR", "") if request else "") or ""
        name = "reset:" + self.cleaned_data["email"]
        if throttle.locked_for(name, address):
            return
        throttle.failed(name, address)
        super().save(*args, request=request, **kwargs)
