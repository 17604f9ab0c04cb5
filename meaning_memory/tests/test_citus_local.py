"""``scripts/citus-local.sh`` from the outside, where it can run anywhere: what it says and what
it refuses. The cluster it starts is exercised by the Citus flows, where one is available."""

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "citus-local.sh"


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )


def test_without_a_command_it_says_what_it_does_and_what_it_needs():
    done = run(PG_CONFIG="/nonexistent/pg_config")
    assert done.returncode == 0, done.stderr
    for words in ("build CITUS_SRC PGVECTOR_SRC", "postgresql-server-dev-15", "v13.2.2", "v0.8.5"):
        assert words in done.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("restart",), "build CITUS_SRC"),  # an unknown command: the usage, on stdout
        (("build",), "build needs CITUS_SRC PGVECTOR_SRC"),
        (("build", "/", "/"), "/ holds no Citus source"),
        (("createdb",), "createdb needs NAME"),
        (("createdb", "Bad-Name"), "not 'Bad-Name'"),
        (("createdb", "x" * 64), "at most 63"),
        (("createdb", "caf\u00e9"), "lower-case letters"),
        (("start",), "no pg_config at /nonexistent/pg_config"),
        (("stop",), "no pg_config at /nonexistent/pg_config"),
    ],
)
def test_what_it_refuses_it_names_and_exits_2(args, said):
    done = run(*args, PG_CONFIG="/nonexistent/pg_config")
    assert done.returncode == 2
    assert said in done.stdout + done.stderr


def test_a_pgvector_build_is_never_tuned_to_this_machines_cpu():
    # -march=native would build a library that crashes (SIGILL) on a CPU without the
    # instructions it chose: every make of pgvector passes OPTFLAGS="".
    text = SCRIPT.read_text()
    makes = [line for line in text.splitlines() if 'make -C "$vector"' in line]
    assert len(makes) == 3
    assert all('OPTFLAGS=""' in line for line in makes if "clean" not in line)
