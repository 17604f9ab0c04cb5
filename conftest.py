import pytest

from meaning_memory.testing import Actor, make_actor

pytest_plugins = ["meaning_memory.pytest_plugin"]


@pytest.fixture(autouse=True)
def _fresh_statistics():
    """Each test reads PostgreSQL's word statistics of its own data (see memories.search) and
    compiles its own Eligible boundaries (see memories.eligibility)."""
    from memories.eligibility import forget_boundaries
    from memories.search import forget_statistics

    forget_statistics()
    forget_boundaries()


@pytest.fixture(autouse=True)
def _no_release_evidence(settings):
    """A test's readiness report is built from the runs it records (readiness.release: the
    release's own shipped runs are tested where they are asked for)."""
    settings.MM_RELEASE_EVIDENCE = ""


@pytest.fixture
def alice(db) -> Actor:
    """An agent in workspace A, member of the shared scope team:accounts."""
    return make_actor("acme", "alice", scopes=["team:accounts"])


@pytest.fixture
def bob(db) -> Actor:
    """Alice's colleague in workspace A: shares team:accounts, not alice's private scope."""
    return make_actor("acme", "bob", scopes=["team:accounts"])


@pytest.fixture
def charlie(db) -> Actor:
    """The outsider: an agent in another workspace."""
    return make_actor("globex", "charlie")


@pytest.fixture
def served(transactional_db):
    """The served ASGI app (Django, the API and /mcp) on a loopback port, in a thread: a live
    engine on the test database. Yields its base URL."""
    import threading
    import time

    import uvicorn

    from meaning_memory.asgi import build_application
    from meaning_memory.tests.served import free_port

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            build_application(),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            proxy_headers=False,  # as ``serve`` runs it (meaning_memory.proxies)
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Close what still holds the test database before it is dropped (which fails while any
    connection to it is open): the connection pool, and connections of other threads and
    contexts (live servers, Playwright's event loop, worker threads) that outlive their tests."""
    yield
    from django.db import connections

    with django_db_blocker.unblock():
        for connection in connections.all():
            if getattr(connection, "pool", None) is not None:
                connection.close_pool()
        with connections["default"].cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
