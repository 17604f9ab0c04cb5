"""The readiness report where people and agents look: a dashboard page and a REST endpoint.

The report is read-only and the same for every workspace (it describes the engine); the page
still belongs to a workspace the user is a member of, like every dashboard page.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memories.views import page_context, page_membership
from readiness.report import readiness_report, table


@login_required
def page(request: HttpRequest, slug: str) -> HttpResponse:
    membership = page_membership(request, slug)
    return render(
        request,
        "readiness/readiness.html",
        page_context(request, membership, reports=readiness_report()),
    )


class ReadinessApi(APIView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT},
        summary="The STARE readiness report, from the registry and recorded evidence",
    )
    def get(self, request: Request) -> Response:
        reports = readiness_report()
        return Response({"capabilities": [r.to_dict() for r in reports], "table": table(reports)})
