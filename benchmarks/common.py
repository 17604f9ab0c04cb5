"""What every benchmark here shares: its own embedded database, and the machine it ran on."""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def setup_django(data_dir: Path, database_url: str | None = None) -> None:
    """Django on the benchmark's own embedded PostgreSQL in ``data_dir`` (never
    ``DATABASE_URL`` or the developer's ``MM_DATA_DIR``), or on ``database_url`` when the
    benchmark is given one explicitly, migrated, with the local embedder."""
    os.environ.pop("DATABASE_URL", None)
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    os.environ["MM_DATA_DIR"] = str(data_dir.resolve())
    os.environ["MM_EMBEDDER"] = "local"
    os.environ["DJANGO_SETTINGS_MODULE"] = "meaning_memory.settings"
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def add_smoke_option(parser: argparse.ArgumentParser) -> None:
    """``--smoke``: what .ci/run runs, so that no benchmark stops running unnoticed."""
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="smallest size and a few queries, to show the benchmark still runs (CI)",
    )


def machine() -> dict[str, Any]:
    """CPUs, memory, PostgreSQL, pgvector and Python versions (after ``setup_django``)."""
    from django.db import connection

    def first(path: str, prefix: str) -> str:
        lines = Path(path).read_text().splitlines() if Path(path).exists() else []
        return next(
            (line.split(":", 1)[1].strip() for line in lines if line.startswith(prefix)), ""
        )

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT version(), (SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
            "current_setting('shared_buffers')"
        )
        postgres, pgvector, shared_buffers = cursor.fetchone()
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": first("/proc/cpuinfo", "model name") or platform.processor(),
        "ram_gib": round(int((first("/proc/meminfo", "MemTotal") or "0").split()[0]) / 2**20, 1),
        "postgresql": postgres,
        "pgvector": pgvector,
        "shared_buffers": shared_buffers,
        "python": platform.python_version(),
    }


def describe(info: dict[str, Any]) -> str:
    return (
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['ram_gib']} GiB RAM; "
        f"{info['postgresql']}; pgvector {info['pgvector']}; shared_buffers "
        f"{info['shared_buffers']}; Python {info['python']}."
    )


def read_into_page_cache(tables: tuple[str, ...]) -> tuple[float, int]:
    """Read the files of ``tables``, their TOAST tables and all their indexes once, so that the
    operating system keeps them in its page cache, as on a server that has run for a while
    (pg_prewarm is not in the embedded build, and a query reaches only the index pages its
    search visits). The benchmarks' PostgreSQL is their own, on this machine. Returns seconds
    and bytes read."""
    from django.db import connection

    started = time.perf_counter()
    read = 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('data_directory')")
        (data_directory,) = cursor.fetchone()
        cursor.execute(
            "SELECT pg_relation_filepath(c.oid) FROM pg_class c WHERE c.oid IN ("
            "SELECT t.oid FROM pg_class t WHERE t.relname = ANY(%(tables)s) "
            "UNION SELECT t.reltoastrelid FROM pg_class t WHERE t.relname = ANY(%(tables)s) "
            "UNION SELECT i.indexrelid FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid "
            "WHERE t.relname = ANY(%(tables)s))",
            {"tables": list(tables)},
        )
        paths = [Path(data_directory) / row[0] for row in cursor.fetchall() if row[0]]
    for path in paths:
        # The relation's first segment, then .1, .2, … (a segment is 1 GB).
        for segment in [path, *sorted(path.parent.glob(f"{path.name}.*"))]:
            if segment.name != path.name and not segment.suffix[1:].isdigit():
                continue  # _fsm, _vm and other forks are not read by searches
            with segment.open("rb") as handle:
                while chunk := handle.read(1 << 24):
                    read += len(chunk)
    return time.perf_counter() - started, read


#: LoCoMo's seven dev conversations (``../shared/data/README.md``), the default ``--data``.
LOCOMO_DEV = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev7.json"


def add_data_options(
    parser: argparse.ArgumentParser, data_dir: str, data: Path | None = LOCOMO_DEV
) -> None:
    """``--data`` (a file of ``data``'s shape; none when ``data`` is None), ``--json OUT`` and
    ``--data-dir`` (the benchmark's own embedded database, ``benchmarks/out/<data_dir>``)."""
    if data is not None:
        parser.add_argument(
            "--data", type=Path, default=data, help=f"a file in the shape of {data.name}"
        )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "out" / data_dir)


def check_data(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if not args.data.exists():
        parser.error(f"--data {args.data} does not exist")


def write_json(path: Path | None, payload: dict[str, Any]) -> None:
    """The figures as JSON at ``path`` (``--json``), when one was given."""
    if path is None:
        return
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n")
