"""REST API for agents: start a consolidation run of their workspace, and read one."""

from __future__ import annotations

from django.http import HttpResponse
from django_q.tasks import async_task
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from consolidation.answers import RunAnswer, SagaAnswer
from consolidation.models import CompiledSnapshot
from consolidation.presenters import run_to_dict, saga_to_dict
from consolidation.saga import saga_recall
from consolidation.serializers import ConsolidateInput, SagaInput
from consolidation.services import consolidation_start, run_get
from consolidation.tasks import RUN
from memories.errors import NotFound
from memories.selectors.reader import Reader
from memories.serializers import parse


class ConsolidateApi(APIView):
    @extend_schema(
        request=ConsolidateInput,
        responses={202: RunAnswer},
        summary="Start a consolidation run of your workspace (a worker runs it)",
        description="202 with the queued run; read it again at /api/v1/consolidate/<run_id>. "
        "409 naming the run while another run of the workspace is queued or running.",
    )
    def post(self, request: Request) -> Response:
        values = parse(ConsolidateInput, request.data)
        run = consolidation_start(
            workspace=request.user.workspace,
            trigger="api",
            phases=values.get("phases"),
            dry_run=values.get("dry_run", False),
            agent=request.user,
        )
        async_task(RUN, run.pk)
        return Response(run_to_dict(run), status=status.HTTP_202_ACCEPTED)


class RunApi(APIView):
    @extend_schema(
        responses={200: RunAnswer},
        summary="A consolidation run of your workspace: its state, each phase's counts and time",
        description="Another workspace's run is a 404, as one that does not exist.",
    )
    def get(self, request: Request, run_id: str) -> Response:
        return Response(run_to_dict(run_get(run_id=run_id, workspace_id=request.user.workspace_id)))


class SagaApi(APIView):
    @extend_schema(
        request=SagaInput,
        responses={200: SagaAnswer},
        summary="Saga recall (preview): a whole story across sessions, with a summary",
        description="With a query: the threads of its best hits, their memories in time order "
        "and an extractive summary (each line with its mem_id). With a thread_id: that thread. "
        "403 while MM_SAGA is off; another workspace's or scope's thread is a 404.",
    )
    def post(self, request: Request) -> Response:
        values = parse(SagaInput, request.data)
        saga = saga_recall(Reader.of_agent(request.user), **values)
        return Response(saga_to_dict(saga))


class KeptCompiledFileApi(APIView):
    @extend_schema(
        responses={(200, "text/markdown"): OpenApiTypes.STR},
        summary="Your compiled memory file as the last consolidation run kept it",
        description="Markdown, default options, as of the run's compile phase (the header says "
        "when). 404 until a run's compile phase has kept one for you; the live file is "
        "/api/v1/compiled.",
    )
    def get(self, request: Request) -> HttpResponse:
        kept = CompiledSnapshot.objects.filter(agent=request.user).first()
        if kept is None:
            raise NotFound(
                "no compiled file kept for this agent yet: a consolidation run's compile phase "
                "keeps one"
            )
        return HttpResponse(kept.markdown, content_type="text/markdown; charset=utf-8")
