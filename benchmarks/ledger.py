"""What one look at the fair use ledger costs (``meaning_memory.ledger``): the reads a web
process's fair queue makes each time it hands a slot on, or looks again for one another
process freed (every ``POLL_SECONDS`` while it has requests waiting).

    python benchmarks/ledger.py --tenants 8,32,128

For each number of tenants, two processes' rows on one shared ledger file (this process and
its parent, each with every tenant waiting, half of them running): one look is the share, the
processes held back, every waiting tenant's running count and cost, the best waiting tenant
and the total, as ``FairQueue._dispatch`` reads them, under the file's lock. The same look on
a ``LocalLedger`` (one process) beside it. Needs no database (``--data`` is not read).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, add_smoke_option

sys.path.insert(0, str(ROOT))

HALF_LIFE = 2.0


def filled(ledger, tenants: list[str], now: float, running: bool) -> None:
    with ledger.locked() as counts:
        for n, tenant in enumerate(tenants):
            counts.mark_seen(tenant, now)
            counts.add_waiting(tenant, 1)
            if running and n % 2:
                counts.add_running(tenant, 1)
                counts.add_cost(tenant, 0.01, now, HALF_LIFE)


def look_ms(ledger, tenants: list[str], now: float, looks: int) -> float:
    from meaning_memory.fairqueue import FairQueue

    queue = FairQueue(slots=2, waiting_per_tenant=10, ledger=ledger)
    started = time.perf_counter()
    for _ in range(looks):
        with ledger.locked() as counts:
            share = queue._share(counts, now)
            held = counts.held_back(queue.slots, share)
            under = [t for t in tenants if counts.running(t) < share]
            {t: (counts.running(t), counts.cost(t, now, HALF_LIFE)) for t in under}
            counts.best_waiting(share, now, HALF_LIFE, skip=held)
            counts.total()
    return (time.perf_counter() - started) / looks * 1000


def row(count: int, looks: int) -> dict[str, float]:
    from meaning_memory.ledger import LocalLedger, SharedLedger

    tenants = [f"agent-{n}" for n in range(count)]
    now = time.monotonic()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "ledger"
        mine = SharedLedger(path, pid=os.getpid())
        other = SharedLedger(path, pid=os.getppid())
        filled(mine, tenants, now, running=True)
        filled(other, tenants, now, running=False)
        shared = look_ms(mine, tenants, now, looks)
    local = LocalLedger()
    filled(local, tenants, now, running=True)
    return {"tenants": count, "shared_ms": shared, "local_ms": look_ms(local, tenants, now, looks)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", default="8,32,128")
    parser.add_argument("--looks", type=int, default=200)
    parser.add_argument("--json", type=Path)
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.tenants, args.looks = "8", 5
    rows = [row(int(n), args.looks) for n in args.tenants.split(",")]

    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    print(f"\n`{command}`\n")
    print(f"Machine: {len(os.sched_getaffinity(0))} CPUs; {args.looks} looks a row.\n")
    print("| tenants waiting | ms a look, shared ledger (two processes) | ms a look, one process |")
    print("|---:|---:|---:|")
    for found in rows:
        print(f"| {found['tenants']} | {found['shared_ms']:.3f} | {found['local_ms']:.3f} |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"command": command, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
