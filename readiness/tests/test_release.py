"""Release evidence (issue 38): the checks' runs recorded for a release ship with the package;
a fresh install's report shows them, marked as the release's, judged like any run (stale once
the code changed), and an install's own runs take precedence."""

from __future__ import annotations

import json
from io import StringIO

from django.core.management import call_command

from readiness.evidence import record
from readiness.models import Evidence
from readiness.registry import CAPABILITIES
from readiness.report import full_text, readiness_report, table

S_CORE = next(c for c in CAPABILITIES if c.key == "S/core")


def _recorded_release(tmp_path, value: float) -> tuple:
    """A release file written, as the project writes it, from a database's runs."""
    for check in S_CORE.checks:
        record(S_CORE, check, value, dataset="locomo_dev7.json", dataset_sha256="ab" * 32)
    path = tmp_path / "release_evidence.json"
    out = StringIO()
    call_command("readiness", "--write-release", str(path), stdout=out)
    Evidence.objects.all().delete()  # a fresh install: no run of its own
    return path, out.getvalue()


def _s_core():
    return next(r for r in readiness_report() if r.capability.key == "S/core")


def test_a_fresh_install_shows_the_releases_evidence_marked_so(db, tmp_path, settings):
    path, printed = _recorded_release(tmp_path, 1.0)
    assert f"written to {path}" in printed
    assert json.loads(path.read_text())["format"] == 1

    assert _s_core().verdict == "pending"  # without the file: nothing to show
    settings.MM_RELEASE_EVIDENCE = str(path)
    report = _s_core()

    assert report.verdict == "pass" and report.evidence != "none"
    checks = report.to_dict()["checks"]
    assert {c["source"] for c in checks} == {"release"}
    assert {c["dataset"] for c in checks} == {"locomo_dev7.json"}
    note = table(readiness_report()).split("|\n")[-1]
    assert note.startswith("\nFrom the release's runs (") and ": S/core." in note


def test_the_releases_evidence_is_stale_once_the_code_changed(db, tmp_path, settings):
    path, _ = _recorded_release(tmp_path, 1.0)
    data = json.loads(path.read_text())
    for item in data["evidence"]:
        item["code_version"] = "0" * 64  # measured for other code
    path.write_text(json.dumps(data))
    settings.MM_RELEASE_EVIDENCE = str(path)

    assert _s_core().verdict == "stale"
    assert "the release's run" in full_text(readiness_report())


def test_an_installs_own_run_takes_precedence(db, tmp_path, settings):
    path, _ = _recorded_release(tmp_path, 1.0)
    settings.MM_RELEASE_EVIDENCE = str(path)
    for check in S_CORE.checks:
        record(S_CORE, check, 0.0, dataset="mine.json")  # this install's: failing

    report = _s_core()

    assert report.verdict == "fail"
    assert {c["source"] for c in report.to_dict()["checks"]} == {"install"}
    assert table(readiness_report()).endswith("|\n")  # nothing rests on the release's runs


def test_the_readiness_page_says_whose_runs_each_verdict_rests_on(client, db, tmp_path, settings):
    from meaning_memory.testing import make_member
    from memories.models import Workspace

    path, _ = _recorded_release(tmp_path, 1.0)
    settings.MM_RELEASE_EVIDENCE = str(path)
    workspace = Workspace.objects.create(slug="acme", name="Acme")
    client.force_login(make_member("vic", workspace, "viewer"))
    released = json.loads(path.read_text())["evidence"][0]["recorded_at"][:10]

    page = client.get("/w/acme/readiness").content.decode()
    s_core = page.split("<code>core</code>")[1].split("</tr>")[0]
    t_core = page.split("<code>core</code>")[2].split("</tr>")[0]

    assert f"the release ({released})" in s_core and "pass" in s_core
    assert "—" in t_core and "pending" in t_core  # the file holds no run of T/core

    record(S_CORE, S_CORE.checks[0], 1.0)  # one of S/core's checks run here too
    mixed = client.get("/w/acme/readiness").content.decode().split("<code>core</code>")[1]
    assert f"both (release {released})" in mixed.split("</tr>")[0]


def test_the_shipped_file_gives_a_fresh_install_s_and_t_core(db, settings):
    """What the release claims: the file in the package (its default place) holds LoCoMo runs
    of S/core and T/core that pass. Once the code of either changes, the report calls them
    ``stale`` (this test then says to run the evaluation again and write the file)."""
    from pathlib import Path

    shipped = Path(settings.BASE_DIR) / "readiness" / "data" / "release_evidence.json"
    settings.MM_RELEASE_EVIDENCE = str(shipped)
    reports = {r.capability.key: r for r in readiness_report()}
    again = (
        "the code changed since the release's runs: run meaning-memory stare-eval "
        "(docs/stare.md) and readiness --write-release readiness/data/release_evidence.json"
    )

    for key in ("S/core", "T/core"):
        report = reports[key]
        checks = report.to_dict()["checks"]
        gated = [c for c in checks if c["kind"] == "gated-eval"]
        assert {c["source"] for c in checks} == {"release"}, key
        assert gated and all(c["dataset"] == "locomo_dev7.json" for c in gated), key
        assert report.verdict == "pass", f"{key}: {report.verdict}; {again}"
        assert report.evidence == "gated-eval", key
