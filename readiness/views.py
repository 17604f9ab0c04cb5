"""The readiness report where people and agents look: a dashboard page and REST endpoints
(the report, and each capability's evidence over time).

The report is read-only and the same for every workspace (it describes the engine); the page
still belongs to a workspace the user is a member of, like every dashboard page.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memories.serializers import (
    INTEGER_MESSAGES,
    Integer,
    StrictSerializer,
    parse,
    query_values,
)
from memories.views import page_context, page_membership
from readiness.answers import HistoryAnswer, ReadinessAnswer
from readiness.history import DEFAULT_RUNS, MAX_RUNS, CapabilityHistory, readiness_history
from readiness.registry import CAPABILITIES
from readiness.report import CapabilityReport, readiness_report, source, table

KEYS = [c.key for c in CAPABILITIES]


class HistoryInput(StrictSerializer):
    capability = serializers.ChoiceField(
        choices=KEYS,
        required=False,
        allow_blank=True,
        error_messages={"invalid_choice": '"{input}" is not one of: ' + ", ".join(KEYS) + "."},
        help_text="One capability, as DIM/name (S/core); default (or blank) every one.",
    )
    runs = Integer(
        required=False,
        min_value=1,
        max_value=MAX_RUNS,
        error_messages={
            **INTEGER_MESSAGES,
            "min_value": f"must be 1 to {MAX_RUNS}.",
            "max_value": f"must be 1 to {MAX_RUNS}.",
        },
        help_text=f"Each capability's latest runs, 1 to {MAX_RUNS}; default {DEFAULT_RUNS}.",
    )


def history(capability: str | None = None, runs: int = DEFAULT_RUNS) -> list[CapabilityHistory]:
    chosen = tuple(c for c in CAPABILITIES if capability in (None, c.key))
    return readiness_history(chosen, runs)


#: A check's chart (SVG units): the plot 140 wide and 36 high inside a frame with room for
#: the y axis's labels on the left.
CHART_LEFT, CHART_TOP, CHART_WIDTH, CHART_HEIGHT = 34, 6, 140, 36


def _chart(check_id: str, threshold: float, points: list[Any]) -> dict[str, Any]:
    """A check's values over a capability's runs, against its threshold: each run a dot
    (passed, failed, or no value), the threshold a dashed line, the run where the capability's
    verdict changed a marker, for the template's inline SVG."""
    values = [p.checks[check_id]["value"] for p in points if check_id in p.checks]
    known = [v for v in values if v is not None] + [threshold]
    low, high = min(known), max(known)
    if high - low < 0.02:
        low, high = low - 0.01, high + 0.01
    step = CHART_WIDTH / max(len(points) - 1, 1)

    def x(index: int) -> float:  # one run alone sits in the middle
        return round(CHART_LEFT + (index * step if len(points) > 1 else CHART_WIDTH / 2), 1)

    def y(value: float) -> float:
        return round(CHART_TOP + CHART_HEIGHT * (high - value) / (high - low), 1)

    dots, line = [], []
    for i, point in enumerate(points):
        run = point.checks.get(check_id)
        if run is None:
            continue
        value = run["value"]
        dot = {
            "x": x(i),
            "y": y(value) if value is not None else CHART_TOP + CHART_HEIGHT,
            "state": "none" if value is None else ("pass" if run["passed"] else "fail"),
            "title": f"{point.when}: "
            f"{'no value' if value is None else round(value, 4)} (threshold {threshold})",
        }
        dots.append(dot)
        if value is not None:
            line.append(f"{dot['x']},{dot['y']}")
    return {
        "dots": dots,
        "line": " ".join(line),
        "threshold_y": y(threshold),
        "high": round(high, 3),
        "low": round(low, 3),
        "changes": [x(i) for i, p in enumerate(points) if p.changed],
        "left": CHART_LEFT,
        "right": CHART_LEFT + CHART_WIDTH,
        "top": CHART_TOP,
        "bottom": CHART_TOP + CHART_HEIGHT,
        "width": CHART_LEFT + CHART_WIDTH + 6,
        "height": CHART_TOP + CHART_HEIGHT + 6,
    }


def _history_rows(histories: list[CapabilityHistory]) -> list[dict[str, Any]]:
    return [
        {
            "capability": h.capability,
            "points": h.points,
            "last": h.points[-1] if h.points else None,
            "changes": [p for p in h.points if p.changed],
            "charts": [
                {"check": check, "chart": _chart(check.id, check.threshold, h.points)}
                for check in h.capability.checks
                if any(check.id in p.checks for p in h.points)
            ],
        }
        for h in histories
    ]


def _source(report: CapabilityReport) -> str:
    """Whose runs a capability's evidence comes from: this install's, the release's (with its
    date), both, or none yet."""
    found = [s.evidence for s in report.checks if s.evidence is not None]
    release = [e for e in found if source(e) == "release"]
    if not found:
        return "—"
    if not release:
        return "this install"
    when = max(e.created_at for e in release).date().isoformat()
    return f"the release ({when})" if len(release) == len(found) else f"both (release {when})"


def plain_summary(reports: list[CapabilityReport]) -> dict[str, list[CapabilityReport]]:
    """The report in three groups a team lead reads first: on and passing its checks (what a
    team can rely on), on but not proven or not finished (experimental), and off."""
    groups: dict[str, list[CapabilityReport]] = {"rely": [], "experimental": [], "off": []}
    for report in reports:
        on = not report.deployment.startswith(("off", "opt-in (off"))
        if not on:
            groups["off"].append(report)
        elif report.verdict == "pass" and report.capability.implementation == "GA":
            groups["rely"].append(report)
        else:
            groups["experimental"].append(report)
    return groups


@login_required
def page(request: HttpRequest, slug: str) -> HttpResponse:
    membership = page_membership(request, slug)
    reports = readiness_report()
    checks = [s for r in reports for s in r.checks]
    return render(
        request,
        "readiness/readiness.html",
        page_context(
            request,
            membership,
            reports=reports,
            summary=plain_summary(reports),
            rows=[{"report": r, "source": _source(r)} for r in reports],
            open_checks=sum(s.status != "pass" for s in checks),
            all_checks=len(checks),
            markdown=table(reports),
            history=_history_rows(history(runs=DEFAULT_RUNS)),
        ),
    )


class ReadinessApi(APIView):
    @extend_schema(
        responses={200: ReadinessAnswer},
        summary="The STARE readiness report, from the registry and recorded evidence",
    )
    def get(self, request: Request) -> Response:
        reports = readiness_report()
        return Response({"capabilities": [r.to_dict() for r in reports], "table": table(reports)})


class ReadinessHistoryApi(APIView):
    @extend_schema(
        parameters=[HistoryInput],
        responses={200: HistoryAnswer},
        summary="Each capability's evidence over time: per evaluation run, its checks' values "
        "against their thresholds and the verdict after it, marked when it changed",
    )
    def get(self, request: Request) -> Response:
        values = parse(HistoryInput, query_values(request.query_params), from_text=True)
        found = history(values.get("capability") or None, values.get("runs", DEFAULT_RUNS))
        return Response({"capabilities": [h.to_dict() for h in found]})
