"""Many memories in one call: a conversation's messages written, the memories of an entity or a
metadata filter erased."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memories import services
from memories.api.answers import BulkAnswer, ErasureAnswer
from memories.operations import messages_remember
from memories.presenters import bulk_results_to_dict, erasure_to_dict
from memories.serializers import EraseChosenInput, MessagesInput, parse


class MessagesApi(APIView):
    @extend_schema(
        operation_id="messages_remember",
        request=MessagesInput,
        responses={
            201: OpenApiResponse(BulkAnswer, description="At least one message was stored."),
            200: OpenApiResponse(BulkAnswer, description="Every message was stored already."),
        },
        summary="Remember a conversation: a memory per message, with its speaker and time",
        description='Body `{"session": "...", "messages": [{"role": "user", "name": "Priya", '
        '"content": "...", "at": "..."}]}`. Each message becomes an episodic memory of the '
        "session: its text `<name>: <content>`, its claim attributed to the speaker, perspective "
        "user for a user's message (self otherwise), written at `at`; each is stored once (its "
        "`id`, or its role, name, time and content), so the conversation may be sent again or "
        "sent longer. All or nothing: a bad message refuses the call (400 naming "
        "`messages[i].field`). With an extraction model configured, the consolidation run "
        "queued after it stores the facts found in them (docs/api.md, Conversations).",
    )
    def post(self, request: Request) -> Response:
        results = messages_remember(agent=request.user, arguments=request.data)
        data = bulk_results_to_dict(results)
        return Response(
            data, status=status.HTTP_201_CREATED if data["stored"] else status.HTTP_200_OK
        )


class EraseChosenApi(APIView):
    @extend_schema(
        operation_id="memories_erase_chosen",
        request=EraseChosenInput,
        responses={200: ErasureAnswer},
        summary="Erase for good every memory you see that mentions an entity or matches a "
        "metadata filter",
        description='`{"entity": "Orion", "reason": "...", "dry_run": true}` or `{"metadata": '
        '{"customer": "orion"}, ...}`: with `dry_run` the mem_ids that would go, and nothing '
        "changes; without it they are erased as one memory is (text, vectors, links, history, "
        "every copy of their words; a tombstone each), and an entity erased by name goes too "
        "once nothing names it. Only the memories of the scopes you see are chosen; an entity "
        "you cannot see is a 404, as one that does not exist.",
    )
    def post(self, request: Request) -> Response:
        erasure = services.memories_erase_by_agent(
            agent=request.user, **parse(EraseChosenInput, request.data)
        )
        return Response(erasure_to_dict(erasure))
