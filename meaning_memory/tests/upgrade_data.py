"""What the upgrade test writes with the previous release's code (run by its own ``shell``, so
every row is made by that release's services, as an install of it would have): two
workspaces (one named as another but for case, which that release allowed), agents and a team
member, memories of every kind (private and shared, in sessions, with entities, links,
metadata and keys, superseded, pinned, forgotten), declared and merged entities, a
consolidation run of every phase, divergences and readiness evidence. It prints the agents'
tokens as JSON."""

SCRIPT = r"""
import json
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from consolidation.services import consolidation_execute, consolidation_start
from memories import services
from memories.models import Entity, Membership

alice, alice_token = services.agent_create(
    workspace_slug="acme", name="alice", shared_scopes=["team:accounts"]
)
bob, bob_token = services.agent_create(
    workspace_slug="acme", name="bob", shared_scopes=["team:accounts"]
)
other, other_token = services.agent_create(workspace_slug="Acme", name="carol")
user = get_user_model().objects.create_user("dana", password="pw", is_staff=True)
Membership.objects.create(user=user, workspace=alice.workspace, role="admin")

now = timezone.now()
written = []

def remember(agent, text, minutes, **fields):
    memory = services.memory_remember(
        agent=agent, text=text, created_at=now - timedelta(minutes=minutes), **fields
    ).memory
    written.append(memory)
    return memory

customers = ["Orion Health", "Zephyr Logistics", "Kestrel Analytics", "Marlow & Finch"]
services.entity_declare(
    workspace_id=alice.workspace_id, name="Orion Health", kind="customer", aliases=["Orion"]
)
minutes = 600
for n, customer in enumerate(customers):
    for text in (
        f"{customer} renews its enterprise contract in March.",
        f"{customer} asked for a second sandbox for the data team.",
        f"Maria Lopez said {customer} wants weekly reports.",
    ):
        minutes -= 7
        remember(
            alice if n % 2 else bob,
            text,
            minutes,
            scope="team:accounts",
            session=f"call-{n}",
            memory_type="episodic",
            entities=[{"name": customer, "type": "customer"}],
            metadata={"customer": customer.lower(), "n": n},
            idempotency_key=f"k-{n}-{minutes}",
        )
march = remember(alice, "Zephyr Logistics renews in March.", 90, scope="team:accounts")
remember(
    alice,
    "Zephyr Logistics now renews in June instead of March.",
    80,
    scope="team:accounts",
    supersedes=march.mem_id,
)
private = remember(alice, "Kestrel Analytics pays monthly by credit card.", 70)
remember(bob, "Pinned: the Orion Health budget is 40k.", 60, category="commitment")
services.memory_feedback(agent=bob, mem_id=written[-1].mem_id, action="pin", reason="budget")
gone = remember(alice, "A note written by mistake.", 50)
services.memory_forget(agent=alice, mem_id=gone.mem_id, reason="a mistake")
services.link_add(
    agent=alice, mem_id=private.mem_id, to=march.mem_id, kind="relates_to", note="both renew"
)
remember(other, "Another workspace's memory: Globex keeps its own books.", 40)
remember(alice, "The Orion Health renewal is worth 120k.", 30, scope="team:accounts")
remember(bob, "The Orion Health renewal is worth 80k.", 20, scope="team:accounts")

first = Entity.objects.filter(workspace=alice.workspace, normalized="kestrel analytics").first()
twin = services.entity_declare(
    workspace_id=alice.workspace_id, name="Kestrel Analytic", kind="customer"
).entity
if first is not None:
    services.entity_merge(user=user, entity=twin, into=first, reason="one customer")

run = consolidation_start(workspace=alice.workspace, trigger="command")
consolidation_execute(run)
from memories.services.divergence import divergence_run

divergence_run(workspace=alice.workspace, full=True)
print(json.dumps({"alice": alice_token, "bob": bob_token, "carol": other_token}))
"""
