"""Evidence recorded before evaluation runs existed, grouped into the runs that wrote it.

Each ``stare-eval`` wrote its rows one after another, starting with the synthetic checks, and
never the same check twice: a run starts at the first row, and again at each row whose check
the current run has already recorded. The runs made here have no engine version, datasets or
list of checks not run (none was kept); the rows keep their own dataset name and sha256.
"""

from django.db import migrations


def backfill(apps, schema_editor):
    Evidence = apps.get_model("readiness", "Evidence")
    EvaluationRun = apps.get_model("readiness", "EvaluationRun")
    groups: list[list] = []
    seen: set[str] = set()
    for row in Evidence.objects.filter(run__isnull=True).order_by("id").iterator():
        if not groups or row.check_id in seen:
            groups.append([])
            seen = set()
        groups[-1].append(row)
        seen.add(row.check_id)
    for rows in groups:
        run = EvaluationRun.objects.create(finished_at=rows[-1].created_at)
        # started_at is set on creation; the run started when its first row was written.
        EvaluationRun.objects.filter(pk=run.pk).update(started_at=rows[0].created_at)
        Evidence.objects.filter(pk__in=[row.pk for row in rows]).update(run=run)


class Migration(migrations.Migration):
    dependencies = [("readiness", "0002_evaluation_runs")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
