"""A first run guides its user (issue 38): with no user yet, the login page (and ``serve``'s
banner, in ``test_serve``) give the command that makes one; ``createagent`` prints a curl line
that works as printed."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from memories.models import Memory


def test_the_login_page_says_how_to_make_the_first_user(client, db):
    first = client.get("/accounts/login/").content.decode()
    get_user_model().objects.create_user("ada", password="pw")
    later = client.get("/accounts/login/").content.decode()

    assert ".venv/bin/meaning-memory createsuperuser" in first
    assert "createsuperuser" not in later


@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl on this machine")
def test_createagent_prints_a_curl_line_that_works(served, settings):
    out, err = StringIO(), StringIO()
    call_command(
        "createagent", "--workspace", "acme", "--name", "assistant", stdout=out, stderr=err
    )
    [line] = [line.strip() for line in err.getvalue().splitlines() if "curl" in line]
    assert out.getvalue().strip() in line  # the token just printed

    port = served.rsplit(":", 1)[1]
    command = shlex.split(line.replace("http://127.0.0.1:8000", f"http://127.0.0.1:{port}"))
    answer = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)

    assert '"mem_id"' in answer.stdout, answer.stdout
    assert Memory.objects.filter(text="My first memory.").exists()
