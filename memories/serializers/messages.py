"""A conversation written in one call: its session and its messages (``POST /api/v1/messages``,
``mm_remember_messages``, ``meaning-memory messages``), each message a memory
(``memories.commands.message_memories``)."""

from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from memories import rules
from memories.commands import MESSAGE_ROLES
from memories.models import Memory
from memories.serializers.fields import (
    BLANK_MESSAGES,
    DATETIME_MESSAGES,
    Metadata,
    Rule,
    StrictSerializer,
    Text,
    choice_message,
)

METADATA_HELP = (
    f"A JSON object (at most {rules.METADATA_MAX_DEPTH} levels deep and "
    f"{rules.METADATA_MAX_BYTES:,} bytes as JSON)"
)


class MessageInput(StrictSerializer):
    role = serializers.ChoiceField(
        choices=list(MESSAGE_ROLES),
        error_messages=choice_message(list(MESSAGE_ROLES)),
        help_text="user (perspective user), assistant or system (perspective self), tool (source "
        "kind tool).",
    )
    name = Text(
        required=False,
        allow_blank=True,
        allow_null=True,
        validators=[Rule(rules.entity_reference, max_length=rules.ENTITY_NAME_MAX)],
        help_text='The speaker, e.g. Priya: the memory reads "Priya: <content>" and its claim is '
        "attributed to her (an entity found among the workspace's, or made a person).",
    )
    content = Text(
        trim_whitespace=False,
        error_messages=BLANK_MESSAGES,
        validators=[Rule(rules.message_content, max_length=rules.message_content_max())],
        help_text=f"What was said (at most {rules.message_content_max()} characters: the memory "
        "reads <name>: <content>).",
    )
    at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        error_messages=DATETIME_MESSAGES,
        validators=[Rule(rules.not_in_future)],
        help_text="When it was said (not in the future); default now.",
    )
    id = Text(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=rules.IDEMPOTENCY_KEY_MAX,
        help_text="Your id of the message: sent again, in this session, nothing new is stored. "
        "Default: the message is the same when its role, name, time and content are.",
    )
    metadata = Metadata(
        required=False,
        validators=[Rule(rules.metadata)],
        help_text=METADATA_HELP + " kept with this message's memory, over the conversation's.",
    )


class MessagesInput(StrictSerializer):
    session = Text(
        max_length=200,
        error_messages=BLANK_MESSAGES,
        validators=[Rule(rules.storable_text)],
        help_text="The conversation: every message's memory is of this session.",
    )
    messages = serializers.ListField(
        child=MessageInput(),
        min_length=1,
        max_length=settings.MM_BULK_MAX_ITEMS,
        error_messages={
            "min_length": "must hold at least one message.",
            "max_length": f"must hold at most {settings.MM_BULK_MAX_ITEMS} messages.",
            "not_a_list": 'must be a list of messages ({{"role", "content", ...}}).',
        },
        help_text='The messages in the order they were said: [{"role": "user", "name": "Priya", '
        '"content": "...", "at": "2026-03-01T09:00:00Z"}].',
    )
    scope = Text(
        required=False,
        allow_blank=True,
        help_text="Scope to write to, e.g. team:accounts; default the agent's private scope.",
    )
    category = serializers.ChoiceField(
        choices=Memory.Category.choices,
        required=False,
        error_messages=choice_message(Memory.Category.values),
        help_text="Kind of memory of every message; default observation.",
    )
    metadata = Metadata(
        required=False,
        validators=[Rule(rules.metadata)],
        help_text=METADATA_HELP + " kept with every message's memory (with role and speaker).",
    )
