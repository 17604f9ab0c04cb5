from django.core.management.base import BaseCommand
from django.db import connection

from meaning_memory.distribution import distribution_statements


class Command(BaseCommand):
    help = (
        "Print the statements that distribute the engine's schema on a Citus coordinator "
        "(after `meaning-memory migrate` there): the shared tables as reference tables, the "
        "workspace tables distributed by workspace_id and colocated, each after the tables "
        "it points at. See docs/SCALING.md."
    )

    def handle(self, *args, **options):
        with connection.cursor() as cursor:
            for statement in distribution_statements(cursor):
                self.stdout.write(statement)
