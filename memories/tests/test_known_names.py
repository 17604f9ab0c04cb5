"""A team's notes about five customers, written one by one as an agent writes them: once a
customer's name is an entity of the workspace, every later note that writes it links to it,
whatever the recogniser makes of that sentence; the people are people; job titles and plans
are not entities."""

from __future__ import annotations

from memories.models import Entity, Link
from memories.operations import memory_remember

CUSTOMERS = {
    "Marlow & Finch": [
        "Marlow & Finch is a law firm in London with 200 lawyers.",
        "Marlow & Finch will pilot the contract search feature with 20 lawyers.",
        "Marlow & Finch wants invoices in pounds.",
        "Marlow & Finch renews in October.",
    ],
    "Kestrel Analytics": [
        "Marcus Bell, CTO of Kestrel Analytics, asked about SSO.",
        "Kestrel Analytics is on the Starter plan and pays monthly by credit card.",
        "Kestrel Analytics may upgrade to the Pro plan if the data residency add-on ships.",
        "Kestrel Analytics had two outages in May.",
    ],
    "Zephyr Logistics": [
        "Talked to Jordan Reyes from Zephyr Logistics about the Pro tier.",
        "Zephyr Logistics renews its contract in March.",
        "Zephyr Logistics ships from three warehouses.",
        "Zephyr Logistics has moved its contract renewal from March to June.",
    ],
    "Orion Health": [
        "Priya Nair is the VP of Clinical Operations at Orion Health.",
        "Orion Health renews its enterprise contract in March.",
        "Orion Health wants single sign-on for all clinicians.",
        "Orion Health now renews in June instead of March.",
    ],
    "Blue Ridge Savings Bank": [
        "Blue Ridge Savings Bank signed for 40 seats.",
        "Dana Whitfield said Blue Ridge Savings Bank needs an audit log.",
        "Blue Ridge Savings Bank pays a licence fee of $40,000 a year.",
        "Blue Ridge Savings Bank asked whether we support on-premises installs.",
    ],
}
PEOPLE = ("Marcus Bell", "Jordan Reyes", "Priya Nair", "Dana Whitfield")


def test_every_note_that_names_a_known_customer_links_to_it(alice):
    written = {}
    for name, notes in CUSTOMERS.items():
        written[name] = [
            memory_remember(agent=alice.agent, text=t, scope="team:accounts").memory for t in notes
        ]
    workspace = alice.agent.workspace
    for name, memories in written.items():
        entity = Entity.objects.get(
            workspace=workspace, normalized__in=[name.lower().replace("&", "").replace("  ", " ")]
        )
        linked = set(
            Link.objects.filter(target_entity=entity, removed_at__isnull=True).values_list(
                "source_id", flat=True
            )
        )
        assert {m.pk for m in memories} <= linked, name
    kinds = dict(Entity.objects.filter(workspace=workspace).values_list("name", "kind"))
    for person in PEOPLE:
        assert kinds[person] == "person", (person, kinds[person])
    for customer in CUSTOMERS:
        assert kinds[customer] != "person", customer
    for not_an_entity in ("Starter", "Pro", "CTO", "VP of Clinical Operations", "SSO"):
        assert not_an_entity not in kinds
