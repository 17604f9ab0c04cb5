"""The dashboard's forms. The search and compile forms are generated from the API's own input
shapes (``memories.serializers``), so their fields are the API's; the search page's values are
then checked by the API's serializer, whose messages these forms carry."""

from __future__ import annotations

from django import forms

from memories import rules
from memories.kinds import ENTITY_TYPES
from memories.models import Membership
from memories.serializers import CompileInput, MemoryPageInput, SearchInput
from memories.services import CURATE_ACTIONS
from memories.shapes import form_class

REASON_REQUIRED = "A reason is required: say why."
#: The written range's fields, on a page a day picker each (a day: ``serializers.WrittenBound``).
WRITTEN_LABELS = {"written_from": "Written from", "written_until": "Written until"}


def _day_pickers(form: type[forms.Form]) -> type[forms.Form]:
    for name in WRITTEN_LABELS:
        form.base_fields[name].widget = forms.DateInput(attrs={"type": "date"})
    return form


@_day_pickers
class MemoryListForm(
    form_class(
        MemoryPageInput,
        labels={
            "currently_valid": "Validity",
            **{f"min_{d}_score": f"Min {d.upper()}" for d in "stare"},
            "entity": "Mentions",
            "attributed_to": "Claim by",
            "source_kind": "How it came",
            "ordering": "Order",
            **WRITTEN_LABELS,
        },
        choices={
            "currently_valid": [
                ("", "valid now (default)"),
                ("false", "no longer valid"),
                ("true", "valid now"),
            ],
            "ordering": [("", "newest first"), ("significance", "most significant first")],
        },
        blank={"category": "any", "memory_type": "any", "source_kind": "any"},
        exclude=("page", "page_size"),
    )
):
    """The Memories page's filters: text for ``MemoryPageInput`` to parse."""


@_day_pickers
class SearchForm(
    form_class(
        SearchInput,
        labels={
            "query": "Search",
            "limit": "Results",
            "currently_valid": "Validity",
            **{f"min_{d}_score": f"Min {d.upper()}" for d in "stare"},
            "related_to": "Linked to (mem_id)",
            "link_types": "Link types",
            "min_r": "Min connections",
            "entity": "Customer or person (mentions)",
            "as_of": "As of (valid then)",
            **WRITTEN_LABELS,
        },
        choices={
            "currently_valid": [
                ("", "valid now (default)"),
                ("false", "no longer valid"),
                ("true", "valid now"),
            ]
        },
        blank={"category": "any", "memory_type": "any"},
    )
):
    """The search page's filters: text for ``SearchInput`` to parse."""


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


class CompileForm(
    form_class(
        CompileInput,
        exclude=("as_of",),  # the page shows the file as of now
        labels={"display_mode": "Display", "show_ids": "Show mem_ids"},
        blank={"display_mode": "default", "decay": "configured"},
        typed=True,  # the view hands the cleaned values to compile_options
    )
):
    """The compiled file page's options."""


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150, label="Username")
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.VIEWER)


class EraseForm(forms.Form):
    """The memories an admin erases for good: chosen by one of ``ERASE_BY``."""

    by = forms.ChoiceField(
        choices=[
            ("source", "Source"),
            ("agent", "Agent (what it wrote, and its private memories)"),
            ("session", "Session"),
            ("memory", "One memory (its mem_id)"),
            ("entity", "Entity (its name, an alias or id)"),
            ("metadata", "Metadata filter (its JSON)"),
        ],
        initial="source",
        label="Erase every memory of a",
    )
    value = forms.CharField(max_length=4_000, label="Named", required=False)
    reason = forms.CharField(
        max_length=500,
        required=False,
        help_text="Why (kept in the tombstone, never the content).",
    )
    confirm = forms.BooleanField(required=False, label="I understand that this cannot be undone")


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


#: The entity types a form offers (the page's list suggests them too).
TYPE_HELP = f"{', '.join(ENTITY_TYPES)}, or custom:<name>"


def _type_field() -> forms.CharField:
    return forms.CharField(
        label="Type",
        max_length=80,
        help_text=TYPE_HELP,
        widget=forms.TextInput(attrs={"list": "entity-types"}),
    )


class EntityForm(forms.Form):
    """Declare an entity for the gazetteer; its values go to ``entity_declare``, whose rules
    (and messages) decide."""

    name = forms.CharField(max_length=rules.ENTITY_NAME_MAX)
    kind = _type_field()
    aliases = forms.CharField(
        required=False, help_text="Other names texts use for it, separated by commas."
    )

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        aliases = [a.strip() for a in data["aliases"].split(",") if a.strip()]
        return {"name": data["name"], "kind": data["kind"].strip(), "aliases": aliases}


class EntityFilterForm(forms.Form):
    query = forms.CharField(required=False, label="Name")
    type = forms.CharField(required=False, label="Type")


class MergeForm(forms.Form):
    into = forms.CharField(
        label="Merge into", help_text="The other entity's id, or a name only it has."
    )
    reason = forms.CharField(
        max_length=2000,
        error_messages={"required": REASON_REQUIRED},
        widget=forms.TextInput(attrs={"placeholder": "Why are they one? (required)"}),
    )


class DivergenceCloseForm(forms.Form):
    """A curator's decision on one divergence: the button pressed names it (``status``)."""

    divergence = forms.CharField(widget=forms.HiddenInput)
    status = forms.ChoiceField(choices=[("resolved", "Resolve"), ("dismissed", "Dismiss")])
    reason = forms.CharField(
        max_length=2000,
        error_messages={"required": REASON_REQUIRED},
        widget=forms.TextInput(attrs={"placeholder": "Why? (required)"}),
    )
    #: Resolving: the mem_id of the memory that was right, if the curator says (its source's
    #: record counts it).
    right = forms.CharField(max_length=16, required=False)


class UndoSupersessionForm(forms.Form):
    """A curator's undo of a supersession from an entity's page: the superseded memory is
    active again (``supersession_undo``)."""

    undo = forms.CharField(widget=forms.HiddenInput, max_length=16)
    reason = forms.CharField(
        max_length=2000,
        error_messages={"required": REASON_REQUIRED},
        widget=forms.TextInput(attrs={"placeholder": "Why was it still true? (required)"}),
    )


class UnmergeForm(forms.Form):
    unmerge = forms.CharField(widget=forms.HiddenInput, initial="1")
    reason = forms.CharField(
        max_length=2000,
        error_messages={"required": REASON_REQUIRED},
        widget=forms.TextInput(attrs={"placeholder": "Why are they two? (required)"}),
    )


class RetypeForm(forms.Form):
    """Correct an entity's type; ``entity_retype``'s rules (and messages) decide."""

    retype = _type_field()
    reason = forms.CharField(
        max_length=2000,
        error_messages={"required": REASON_REQUIRED},
        widget=forms.TextInput(attrs={"placeholder": "Why was it wrong? (required)"}),
    )


class SplitForm(forms.Form):
    """Move some of an entity's mentions to its namesake of another type; ``entity_split``'s
    rules (and messages) decide."""

    split = _type_field()
    memories = forms.CharField(
        label="Their memories",
        help_text="The ids of the memories whose mention is the other thing, separated by "
        "spaces or commas.",
    )
    reason = forms.CharField(
        max_length=2000,
        error_messages={"required": REASON_REQUIRED},
        widget=forms.TextInput(attrs={"placeholder": "What is the other thing? (required)"}),
    )

    def memory_ids(self) -> list[str]:
        return [m for m in self.cleaned_data["memories"].replace(",", " ").split() if m]


class SourceFilterForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[("", "writers and entities"), ("writer", "writers"), ("entity", "entities")],
        required=False,
    )
    query = forms.CharField(max_length=200, required=False, label="Name")
