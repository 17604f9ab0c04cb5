"""Guessing a password is slowed (issue 16, finding 7): after MM_LOGIN_MAX_FAILURES failed
logins for one user name, or from one address, even the right password is refused for a while,
with a message saying so; on the dashboard's login and the admin's alike."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memories.models import LoginThrottle

LOCKED = "Too many failed logins: try again in 15 minutes."


@pytest.fixture
def carol(db):
    return get_user_model().objects.create_user("carol", password="right", is_staff=True)


@pytest.mark.parametrize("login", ["/accounts/login/", "/admin/login/"])
def test_after_five_failures_the_right_password_is_refused_for_a_while(client, carol, login):
    for _ in range(5):
        wrong = client.post(login, {"username": "carol", "password": "wrong"})
        assert wrong.status_code == 200 and LOCKED not in wrong.content.decode()

    refused = client.post(login, {"username": "carol", "password": "right"})

    assert refused.status_code == 200 and LOCKED in refused.content.decode()
    assert "_auth_user_id" not in client.session

    LoginThrottle.objects.update(locked_until=timezone.now() - timedelta(seconds=1))
    allowed = client.post(login, {"username": "carol", "password": "right"})
    assert allowed.status_code == 302 and client.session["_auth_user_id"] == str(carol.pk)


def test_one_address_trying_many_names_is_locked_too(client, carol):
    for n in range(5):
        client.post("/accounts/login/", {"username": f"guess{n}", "password": "x"})
    refused = client.post("/accounts/login/", {"username": "carol", "password": "right"})
    elsewhere = client.post(
        "/accounts/login/",
        {"username": "carol", "password": "right"},
        REMOTE_ADDR="192.0.2.7",
    )
    assert LOCKED in refused.content.decode()
    assert elsewhere.status_code == 302


def test_a_success_clears_the_names_count(client, carol):
    for _ in range(4):
        client.post("/accounts/login/", {"username": "carol", "password": "wrong"})
    client.post("/accounts/login/", {"username": "carol", "password": "right"})
    client.logout()
    other = client.post(
        "/accounts/login/", {"username": "carol", "password": "wrong"}, REMOTE_ADDR="192.0.2.8"
    )
    assert LOCKED not in other.content.decode()
    assert LoginThrottle.objects.get(key="user:carol").failures == 1  # counted afresh


@pytest.mark.parametrize("login", ["/accounts/login/", "/admin/login/"])
def test_a_look_alike_spelling_of_a_locked_name_is_locked_too(client, carol, login):
    """The user name field folds compatibility characters (NFKC): full-width letters, a
    ligature or a different case log in as the same user, so they count as one name."""
    for _ in range(5):
        client.post(login, {"username": "carol", "password": "wrong"})
    for n, spelling in enumerate(["ｃａｒｏｌ", "CAROL", " carol ", "Ｃarol"]):
        refused = client.post(
            login, {"username": spelling, "password": "right"}, REMOTE_ADDR=f"198.51.100.{n}"
        )
        assert refused.status_code == 200 and LOCKED in refused.content.decode(), spelling
        assert "_auth_user_id" not in client.session


def test_guesses_spread_over_spellings_and_addresses_add_up(client, carol):
    """Sixteen wrong guesses from four addresses, each with another spelling of one name: the
    name is locked after five, whatever the spelling."""
    spellings = ["carol", "ｃａｒｏｌ", "Carol", "ＣＡＲＯＬ"]
    answers = [
        client.post(
            "/accounts/login/",
            {"username": spellings[n % 4], "password": f"guess{n}"},
            REMOTE_ADDR=f"203.0.113.{n % 4}",
        ).content.decode()
        for n in range(16)
    ]
    assert [LOCKED in a for a in answers] == [False] * 5 + [True] * 11
    right = client.post(
        "/accounts/login/",
        {"username": "ｃａｒｏｌ", "password": "right"},
        REMOTE_ADDR="192.0.2.99",
    )
    assert LOCKED in right.content.decode() and "_auth_user_id" not in client.session
