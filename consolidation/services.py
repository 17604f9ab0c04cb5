"""Starting and running consolidation: one run at a time per workspace, its phases in order,
each phase's counts and time recorded as it ends, a failing phase's error recorded with the
data left as the phases before it left it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from consolidation.models import ConsolidationRun, SupersessionProposal
from consolidation.phases import PHASES, PhaseContext
from memories.errors import Conflict, Forbidden, NotFound, ValidationFailed
from memories.models import Agent, Workspace
from memories.selectors.permissions import require_role
from memories.services.decisions import deciding, decision_reason
from memories.services.enricher import enrich_workspace
from memories.services.supersede import supersede, supersession_undo

#: The advisory lock namespace of consolidation runs (the key is the workspace's id).
LOCK_NAMESPACE = 7302


#: The phases a switch turns off, and the switch.
SWITCHES = {
    "threads": "MM_OPEN_THREADS",
    "extract": "MM_EXTRACTION_URL",
    "divergence": "MM_DIVERGENCE",
}


def enabled_phases() -> list[str]:
    """The phases a run takes when none are named: those not switched off."""
    return [p for p in PHASES if p not in SWITCHES or getattr(settings, SWITCHES[p])]


def check_phases(phases: Iterable[str] | None) -> list[str]:
    """The phases asked, in run order (those switched on when none are named); an unknown one,
    or one switched off, is an error naming it."""
    if phases is None:
        return enabled_phases()
    asked = [phase.strip() for phase in phases if phase.strip()]
    unknown = sorted(set(asked) - set(PHASES))
    if unknown:
        raise ValidationFailed.single(
            "phases",
            f"unknown phase(s): {', '.join(unknown)}; the phases are: {', '.join(PHASES)}.",
        )
    if not asked:
        raise ValidationFailed.single("phases", f"name at least one of: {', '.join(PHASES)}.")
    off = [phase for phase in dict.fromkeys(asked) if phase not in enabled_phases()]
    if off:
        raise Forbidden(
            "phases: "
            + "; ".join(f"{p} is switched off on this engine ({SWITCHES[p]})" for p in off)
            + "."
        )
    return [phase for phase in PHASES if phase in asked]


def consolidation_start(
    *,
    workspace: Workspace,
    trigger: str,
    phases: Iterable[str] | None = None,
    dry_run: bool = False,
    agent: Agent | None = None,
    user: Any = None,
) -> ConsolidationRun:
    """Record a queued run (Conflict, naming it, while another run of the workspace is queued
    or running). A team member (``user``) needs the role to consolidate (``require_role``)."""
    if user is not None:
        require_role(user, workspace, "consolidate")
    asked = check_phases(phases)
    busy = ConsolidationRun.objects.filter(
        workspace=workspace,
        status__in=[ConsolidationRun.Status.QUEUED, ConsolidationRun.Status.RUNNING],
    ).first()
    if busy is not None and busy.status == ConsolidationRun.Status.RUNNING and _lock_free(busy):
        # Its process ended (killed) before it finished: what it did is kept, the watermarks
        # say where the next run goes on from.
        busy.status = ConsolidationRun.Status.FAILED
        busy.error = "its process ended before the run finished"
        busy.finished_at = timezone.now()
        busy.save(update_fields=["status", "error", "finished_at"])
        busy = None
    if busy is not None:
        raise _busy(busy)
    try:
        with transaction.atomic():
            return ConsolidationRun.objects.create(
                workspace=workspace,
                trigger=trigger,
                phases=asked,
                dry_run=dry_run,
                started_by_agent=agent,
                started_by_user=user,
            )
    except IntegrityError:  # another start won the race
        live = ConsolidationRun.objects.filter(
            workspace=workspace,
            status__in=[ConsolidationRun.Status.QUEUED, ConsolidationRun.Status.RUNNING],
        ).first()
        raise _busy(live) from None


def _busy(run: ConsolidationRun | None) -> Conflict:
    name = f"consolidation run {run.run_id}" if run is not None else "another consolidation run"
    status = run.status if run is not None else "running"
    return Conflict(f"{name} of this workspace is {status}; wait for it to end.")


def _lock_free(run: ConsolidationRun) -> bool:
    """Whether no process holds ``run``'s workspace lock (taken and given back at once)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_NAMESPACE, run.workspace_id])
        (free,) = cursor.fetchone()
        if free:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_NAMESPACE, run.workspace_id])
    return bool(free)


def consolidation_execute(
    run: ConsolidationRun, progress: Callable[[str, int, int], None] | None = None
) -> ConsolidationRun:
    """Run ``run``'s phases in order under the workspace's advisory lock (held by this
    connection for the whole run; a process that dies releases it with its connection)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_NAMESPACE, run.workspace_id])
        (locked,) = cursor.fetchone()
    if not locked:
        run.status, run.error = ConsolidationRun.Status.FAILED, "another run holds the workspace"
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "error", "finished_at"])
        return run
    try:
        run.status, run.started_at = ConsolidationRun.Status.RUNNING, timezone.now()
        run.save(update_fields=["status", "started_at"])
        # No phase reads a memory written with MM_ENRICH_LATER before its entities are stored.
        enrich_workspace(run.workspace_id)
        context = PhaseContext(run=run, progress=progress)
        for phase in run.phases:
            started = time.perf_counter()
            try:
                counts = PHASES[phase](context)
            except Exception as exc:  # recorded on the run; the data is as the phase left it
                run.timings[phase] = round(time.perf_counter() - started, 3)
                run.status = ConsolidationRun.Status.FAILED
                run.error = f"{phase}: {type(exc).__name__}: {exc}"
                break
            run.counts[phase] = counts
            run.timings[phase] = round(time.perf_counter() - started, 3)
            run.save(update_fields=["counts", "timings"])
        else:
            run.status = ConsolidationRun.Status.DONE
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "error", "counts", "timings", "finished_at"])
        return run
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_NAMESPACE, run.workspace_id])


def run_get(*, run_id: str, workspace_id: int) -> ConsolidationRun:
    """One run of the workspace; another workspace's is NotFound, like a missing one."""
    run = ConsolidationRun.objects.filter(run_id=run_id, workspace_id=workspace_id).first()
    if run is None:
        raise NotFound(f"no consolidation run {run_id!r}")
    return run


def _decided_already(proposal: SupersessionProposal) -> tuple[str, str]:
    return "proposal", f"proposal {proposal.proposal_id!r} is {proposal.status} already."


def proposal_decide(
    *, proposal: SupersessionProposal, user: Any, accept: bool, reason: str
) -> SupersessionProposal:
    """A curator accepts an open supersession proposal (the older memory is superseded by the
    newer, both histories naming the curator and the reason) or rejects it (nothing changes but
    the proposal). A proposal decided already, a missing reason, or an older memory no longer
    active are errors, and nothing is written."""
    require_role(user, proposal.workspace_id, "decide proposals")
    reason, message = decision_reason(reason, "say why the proposal is accepted or rejected.")
    if message:
        raise ValidationFailed.single("reason", message)
    with deciding(proposal, decided=_decided_already) as proposal:
        if accept:
            supersede(
                old=proposal.older,
                new=proposal.newer,
                user=user,
                reason=f"proposal {proposal.proposal_id} accepted: {reason}",
            )
        proposal.decide(
            status=SupersessionProposal.Status.ACCEPTED
            if accept
            else SupersessionProposal.Status.REJECTED,
            reason=reason,
            user=user,
        )
    return proposal


#: The proposals whose change a curator can undo: applied by the rule, or accepted.
UNDOABLE = (SupersessionProposal.Status.APPLIED, SupersessionProposal.Status.ACCEPTED)


def proposal_undo(
    *, proposal: SupersessionProposal, user: Any, reason: str
) -> SupersessionProposal:
    """A curator undoes a supersession consolidation applied (or a curator accepted): the older
    memory is active again with the window it had (``supersession_undo``), both histories name
    the curator and the reason, and the proposal is ``undone``. One that was never applied, one
    undone already, an older memory no longer superseded by the newer, or a missing reason are
    errors, and nothing is written."""
    require_role(user, proposal.workspace_id, "decide proposals")
    reason, message = decision_reason(reason, "say why the supersession is undone.")
    if message:
        raise ValidationFailed.single("reason", message)
    with transaction.atomic():
        locked = SupersessionProposal.objects.select_for_update().get(
            workspace_id=proposal.workspace_id, pk=proposal.pk
        )
        if locked.status not in UNDOABLE:
            raise ValidationFailed.single(
                "proposal", f"proposal {locked.proposal_id!r} is {locked.status}: nothing to undo."
            )
        older = locked.older
        if older.superseded_by_id != locked.newer_id:
            raise ValidationFailed.single(
                "proposal",
                f"memory {older.mem_id!r} is {older.status}, no longer superseded by "
                f"{locked.newer.mem_id!r}.",
            )
        supersession_undo(
            memory=older, user=user, reason=f"proposal {locked.proposal_id} undone: {reason}"
        )
        locked.decide(status=SupersessionProposal.Status.UNDONE, reason=reason, user=user)
    return locked
