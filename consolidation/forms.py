"""The dashboard's forms for consolidation: a curator's run, undo of a merge, a decision on a
supersession proposal."""

from __future__ import annotations

from django import forms

from memories.forms import REASON_REQUIRED


def _reason() -> forms.CharField:
    return forms.CharField(
        max_length=2000,
        error_messages={"required": REASON_REQUIRED},
        widget=forms.TextInput(attrs={"placeholder": "Why? (required)"}),
    )


class RunNowForm(forms.Form):
    dry_run = forms.BooleanField(required=False, label="Dry run (write nothing)")


class UndoMergeForm(forms.Form):
    mem_id = forms.CharField(widget=forms.HiddenInput)
    reason = _reason()


class ProposalForm(forms.Form):
    """The button pressed names the decision (``decision``)."""

    proposal = forms.CharField(widget=forms.HiddenInput)
    decision = forms.ChoiceField(
        choices=[("accept", "Accept"), ("reject", "Reject"), ("undo", "Undo the supersession")]
    )
    reason = _reason()
