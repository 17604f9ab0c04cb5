import pytest

from meaning_memory.testing import Actor, make_actor


@pytest.fixture(autouse=True)
def _fresh_statistics():
    """Each test reads PostgreSQL's word statistics of its own data (see memories.search) and
    compiles its own Eligible boundaries (see memories.eligibility)."""
    from memories.eligibility import forget_boundaries
    from memories.search import forget_statistics

    forget_statistics()
    forget_boundaries()


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
