"""``meaning-memory <command>``: the same commands as ``python manage.py <command>``."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "meaning_memory.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(argv if argv is not None else sys.argv)
