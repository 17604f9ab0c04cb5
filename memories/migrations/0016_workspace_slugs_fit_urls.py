"""Workspaces stored before their slug was checked (``createagent --workspace "über space"``,
``a/b``) cannot be named in a URL, and made the dashboard fail for their members. Each such
slug becomes one that fits the rule of ``memories.rules.workspace_slug`` (its ASCII letters and
digits, hyphens for the rest, and its id when that is taken); the workspace's name keeps what
was typed. Agents and commands name a workspace by slug: the new one is printed."""

import re

from django.db import migrations

FITS = re.compile(r"[-a-zA-Z0-9_]{1,64}")


def fit_slugs(apps, schema_editor):
    Workspace = apps.get_model("memories", "Workspace")
    taken = set(Workspace.objects.values_list("slug", flat=True))
    for workspace in Workspace.objects.order_by("pk"):
        if FITS.fullmatch(workspace.slug):
            continue
        base = re.sub(r"[^a-zA-Z0-9_]+", "-", workspace.slug).strip("-")[:50] or "workspace"
        slug = base if base not in taken else f"{base}-{workspace.pk}"
        taken.discard(workspace.slug)
        taken.add(slug)
        print(f"\n  workspace {workspace.slug!r} is now {slug!r}", end="")
        workspace.name = workspace.name or workspace.slug
        workspace.slug = slug
        workspace.save(update_fields=["slug", "name"])


class Migration(migrations.Migration):
    dependencies = [("memories", "0015_idempotency_key_per_scope")]

    operations = [migrations.RunPython(fit_slugs, migrations.RunPython.noop)]
