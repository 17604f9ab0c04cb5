"""The shapes of consolidation's answers (``consolidation.presenters``) for the OpenAPI
schema, on the memories API's ``Answer`` (``memories.api.answers``): a run, and a saga."""

from __future__ import annotations

from rest_framework import serializers

from consolidation.models import ConsolidationRun
from consolidation.phases import PHASES
from memories.api.answers.memories import Answer, MemoryAnswer, natural
from memories.models import Thread


class RunAnswer(Answer):
    """A consolidation run: its state, each phase's counts and seconds.

    ``presenters.run_to_dict``."""

    run_id = serializers.CharField()
    status = serializers.ChoiceField(choices=ConsolidationRun.Status.choices)
    trigger = serializers.ChoiceField(choices=ConsolidationRun.Trigger.choices)
    phases = serializers.ListField(
        child=serializers.ChoiceField(choices=list(PHASES)), help_text="In run order."
    )
    dry_run = serializers.BooleanField()
    counts = serializers.DictField(
        child=serializers.DictField(child=serializers.FloatField()),
        help_text="By phase that ran: what it did (or would do), each count by name.",
    )
    timings = serializers.DictField(
        child=serializers.FloatField(), help_text="By phase: its seconds."
    )
    error = serializers.CharField(help_text="Why it failed (blank unless it did).")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class ThreadAnswer(Answer):
    """A thread: related memories across sessions, and whether it is still open.

    ``presenters.thread_to_dict``."""

    thread_id = serializers.CharField()
    title = serializers.CharField()
    status = serializers.ChoiceField(choices=Thread.Status.choices)
    label = serializers.CharField()
    size = natural()
    sessions = natural()
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    cues = serializers.ListField(
        child=serializers.DictField(),
        help_text="What keeps it open: each a member's cue (mem_id, cue, words), free-form.",
    )


class SagaMemoryAnswer(MemoryAnswer):
    """A memory of a saga: its thread, and whether the query found it."""

    thread_id = serializers.CharField(allow_null=True)
    hit = serializers.BooleanField()


class SummaryLineAnswer(Answer):
    """A sentence of a saga's summary, with the memory it comes from."""

    mem_id = serializers.CharField()
    sentence = serializers.CharField()


class SagaAnswer(Answer):
    """A saga: its threads, their memories in time order, and a summary.

    ``presenters.saga_to_dict``."""

    threads = ThreadAnswer(many=True)
    memories = SagaMemoryAnswer(many=True)
    summary = SummaryLineAnswer(many=True)
