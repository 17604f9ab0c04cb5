"""The dashboard's forms. Search arguments are checked by the API's own rules
(``memories.serializers.SearchInput``); these forms render them and carry the messages."""

from __future__ import annotations

from django import forms
from django.conf import settings

from memories import rules
from memories.compile import DISPLAY_MODES
from memories.decay import PRESET_NAMES
from memories.models import Membership, Memory
from memories.services import CURATE_ACTIONS

REASON_REQUIRED = "A reason is required: say why."


def _choices(values: list[str], blank: str) -> list[tuple[str, str]]:
    return [("", blank), *((v, v) for v in values)]


class SearchForm(forms.Form):
    query = forms.CharField(required=False, label="Search")
    limit = forms.CharField(required=False, label="Results")
    as_of = forms.CharField(
        required=False, label="As of", help_text="ISO 8601, e.g. 2026-03-01T09:00:00Z"
    )
    currently_valid = forms.ChoiceField(
        required=False,
        label="Validity",
        choices=[("", "valid now (default)"), ("false", "no longer valid"), ("true", "valid now")],
    )
    category = forms.ChoiceField(required=False, choices=_choices(Memory.Category.values, "any"))
    memory_type = forms.ChoiceField(
        required=False, label="Memory type", choices=_choices(Memory.MemoryType.values, "any")
    )
    source = forms.CharField(required=False)
    min_s_score = forms.CharField(required=False, label="Min S")
    min_t_score = forms.CharField(required=False, label="Min T")
    min_a_score = forms.CharField(required=False, label="Min A")
    min_r_score = forms.CharField(required=False, label="Min R")
    min_e_score = forms.CharField(required=False, label="Min E")


class FeedbackForm(forms.Form):
    action = forms.ChoiceField(choices=[(a, a) for a in CURATE_ACTIONS])
    reason = forms.CharField(
        max_length=2000,
        error_messages={"required": REASON_REQUIRED},
        widget=forms.TextInput(attrs={"placeholder": "Why? (required)"}),
    )

    def clean_reason(self) -> str:
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError(REASON_REQUIRED)
        return reason


class CompileForm(forms.Form):
    budget = forms.IntegerField(
        required=False,
        min_value=rules.MIN_COMPILE_BUDGET,
        max_value=settings.MM_COMPILE_MAX_BUDGET_TOKENS,
        help_text=f"Tokens; default {settings.MM_COMPILE_BUDGET_TOKENS}.",
    )
    display_mode = forms.ChoiceField(
        required=False, label="Display", choices=_choices(list(DISPLAY_MODES), "default")
    )
    decay = forms.ChoiceField(required=False, choices=_choices(list(PRESET_NAMES), "configured"))
    show_ids = forms.BooleanField(required=False, label="Show mem_ids")


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150, label="Username")
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.VIEWER)


class AgentForm(forms.Form):
    name = forms.CharField(max_length=rules.AGENT_NAME_MAX)
    scopes = forms.CharField(
        required=False,
        help_text="Shared scopes it reads and writes, separated by commas (e.g. team:accounts).",
    )

    def clean_scopes(self) -> list[str]:
        names = [s.strip() for s in self.cleaned_data["scopes"].split(",") if s.strip()]
        for name in names:
            if message := rules.scope_name(name):
                raise forms.ValidationError(f"{name!r}: {message}")
        return names
