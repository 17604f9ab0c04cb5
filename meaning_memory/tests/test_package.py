"""The engine as users install it: a wheel built from the repository, installed into a fresh
virtual environment outside the clone (its dependencies from pyproject.toml, at the versions
requirements.txt pins), served from elsewhere with no MM_DATA_DIR: the login page, the API
schema, a write and a search answer, and the data lands in the user's data directory."""

import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from meaning_memory.tests.served import ROOT, Served

pytestmark = pytest.mark.slow


def run(*args, **kwargs) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=1800, **kwargs)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtual environment with the built wheel installed; its python."""
    where = tmp_path_factory.mktemp("package")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(where / "dist"),
        str(ROOT))  # fmt: skip
    [wheel] = (where / "dist").glob("meaning_memory-*.whl")
    run(sys.executable, "-m", "venv", str(where / "venv"))
    python = str(where / "venv" / "bin" / "python")
    # As docs/operations.md says: the wheel, with requirements.txt's pins as constraints.
    run(python, "-m", "pip", "install", "-q", str(wheel), "-c", str(ROOT / "requirements.txt"))
    return Path(python)


def test_the_installed_wheel_serves_from_anywhere(installed, tmp_path):
    home = tmp_path / "home"
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"MM_DATA_DIR", "DATABASE_URL", "PYTHONPATH", "DJANGO_SETTINGS_MODULE"}
    }
    env |= {"HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share"),
            "PYTHONUNBUFFERED": "1"}  # fmt: skip
    where = tmp_path / "elsewhere"
    where.mkdir()
    engine = Served(data_dir=Path(), env=env, python=str(installed), cwd=where)
    # It is the installed package that runs, not the clone's.
    location = engine.command("shell", "-c", "import memories; print(memories.__file__)")
    assert str(ROOT) not in location and "site-packages" in location
    engine.start()  # migrates the new data directory's database first
    try:
        token = engine.agent("acme", "alice")
        with urllib.request.urlopen(f"{engine.base}/accounts/login/", timeout=60) as page:
            assert page.status == 200 and b"password" in page.read().lower()
        schema = engine.call("GET", "/api/v1/schema/?format=json")
        assert schema.status == 200 and "/api/v1/search" in schema.body["paths"]
        stored = engine.call(
            "POST", "/api/v1/memories", token, {"text": "Zephyr renews its contract in March."}
        )
        assert stored.status == 201, stored.body
        found = engine.call("POST", "/api/v1/search", token, {"query": "When does Zephyr renew?"})
        assert found.status == 200
        assert [r["mem_id"] for r in found.body["results"]] == [stored.body["mem_id"]]
        with urllib.request.urlopen(f"{engine.base}/static/memories/dashboard.css") as css:
            assert css.status == 200
    finally:
        output = engine.stop()
    data = home / ".local" / "share" / "meaning-memory"
    assert (data / "pg").is_dir() and (data / "secret_key").is_file(), output
    assert not (where / "var").exists()
