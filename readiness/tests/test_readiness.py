import json
from io import StringIO

import pytest
from django.core.management import call_command

from meaning_memory.testing import evaluation_data, make_actor
from readiness.evidence import record
from readiness.models import EvaluationRun, Evidence
from readiness.registry import CAPABILITIES, capability
from readiness.report import readiness_report, table

LOCOMO = ("locomo", "locomo_dev7.json")  # evaluation files: meaning_memory.testing
PROSECCO = ("prosecco", "prosecco_qt30_dev.jsonl")


def by_key():
    return {r.capability.key: r for r in readiness_report()}


def check(key, check_id):
    cap = capability(key)
    return cap, next(c for c in cap.checks if c.id == check_id)


def test_a_fresh_install_is_pending_everywhere(db):
    reports = readiness_report()

    assert {r.verdict for r in reports} == {"pending"}
    assert {r.evidence for r in reports} == {"none"}
    assert "| **A (Asymmetry)** | `encoding` | `beta` | `off` | `none` | `pending` |" in table(
        reports
    )
    assert len(reports) == len(CAPABILITIES)


def test_stare_eval_records_synthetic_evidence(db):
    out = StringIO()
    call_command("stare-eval", stdout=out)

    reports = by_key()
    assert "recorded 9 check runs" in out.getvalue()
    for key in ("S/core", "T/core"):
        assert reports[key].evidence == "synthetic"
        assert reports[key].verdict == "pending"  # the gated evaluation has not run
    assert reports["E/anchor"].verdict == "pass" and reports["E/anchor"].evidence == "synthetic"
    assert reports["R/links"].evidence == "synthetic"
    assert reports["R/traversal"].evidence == "synthetic"
    assert reports["R/divergence"].evidence == "synthetic"
    assert reports["R/divergence"].verdict == "pending"  # its gated evaluation has not run
    assert reports["R/links"].verdict == "pending"  # its gated evaluation has not run
    for key in ("E/threads", "E/saga", "A/encoding"):
        assert reports[key].evidence == "synthetic" and reports[key].verdict == "pending"


def test_the_links_check_fails_when_a_filter_lets_through_what_it_should_not(db, monkeypatch):
    from memories.search import relational
    from readiness.checks import _sandboxed, links_filter_as_documented

    assert _sandboxed(links_filter_as_documented)[0] == 1.0
    # A related_to that ignores link types and what the reader may see.
    original = relational.related_memory_links
    monkeypatch.setattr(
        relational,
        "related_memory_links",
        lambda pk, scope_ids, kinds, workspace_id: original(
            pk, None, None, workspace_id=workspace_id
        ),
    )
    value, detail = _sandboxed(links_filter_as_documented)
    assert value < 1.0 and detail["passed"] < detail["trials"]


def test_the_divergence_check_fails_when_a_reader_sees_what_it_should_not(db, monkeypatch):
    evaluation_data(*LOCOMO)
    from memories.selectors.reader import Reader
    from readiness import checks
    from readiness.checks import synthetic

    assert checks._sandboxed(checks.divergence_as_documented)[0] == 1.0
    # Divergences listed for every reader of the workspace, whatever they may see.
    original = synthetic.divergences_visible
    monkeypatch.setattr(
        synthetic,
        "divergences_visible",
        lambda reader, status=None: original(Reader.of_engine(reader.workspace), status),
    )
    value, detail = checks._sandboxed(checks.divergence_as_documented)
    assert value < 1.0 and detail["passed"] == detail["trials"] - 1


def test_stare_eval_with_pairs_records_the_detectors_auc(db, tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    rows = [
        ("Zephyr renews in March.", "Zephyr renews in June.", "self-contradiction"),
        ("Zephyr will renew.", "Zephyr will not renew.", "self-contradiction"),
        ("Zephyr renews in March.", "Lunch is at noon on Fridays.", "no self-contradiction"),
        ("The office opens at eight.", "Our cat likes the garden.", "no self-contradiction"),
    ]
    pairs.write_text(
        "\n".join(
            json.dumps({"proposition_1": a, "proposition_2": b, "label": label})
            for a, b, label in rows
        )
    )
    out = StringIO()
    call_command("stare-eval", "--pairs", str(pairs), stdout=out)
    run = Evidence.objects.get(check_id="r.divergence.pairs_auc")
    assert run.dataset == "pairs.jsonl" and len(run.dataset_sha256) == 64
    assert run.value == 1.0 and run.passed  # contradictions score above unrelated pairs
    assert run.detail["pairs"] == 4 and run.detail["positives"] == 2
    assert by_key()["R/divergence"].evidence == "gated-eval"
    # A file of another shape measures nothing: said, kept with the run, and not recorded as
    # the detector's failure.
    pairs.write_text(json.dumps({"proposition_1": "a", "label": "x"}))
    out = StringIO()
    call_command("stare-eval", "--pairs", str(pairs), stdout=out)
    why = "pairs.jsonl is not pairs in ProSeCCo's shape: pairs.jsonl:1: no proposition_2"
    assert f"r.divergence.pairs_auc: not run: {why}" in out.getvalue()
    assert Evidence.objects.filter(check_id="r.divergence.pairs_auc").count() == 1
    assert EvaluationRun.objects.latest("id").not_run["r.divergence.pairs_auc"].startswith(why)
    assert by_key()["R/divergence"].evidence == "gated-eval"


def test_stare_eval_on_prosecco_records_an_auc_above_cosines(db):
    call_command("stare-eval", "--pairs", str(evaluation_data(*PROSECCO)), stdout=StringIO())
    run = Evidence.objects.get(check_id="r.divergence.pairs_auc")
    assert 0.5 < run.value < 1 and run.detail["pairs"] == 571
    assert run.value > run.detail["cosine_auc"]  # the bar: beat cosine alone


def test_stare_eval_with_locomo_records_what_the_checks_earned(db):
    locomo = evaluation_data(*LOCOMO)
    call_command("stare-eval", "--locomo", str(locomo), "--conversations", "1", stdout=StringIO())

    reports = by_key()
    for key, check_id in (
        ("S/core", "s.core.locomo_recall"),
        ("T/core", "t.core.locomo_temporal_recall"),
    ):
        run = Evidence.objects.get(check_id=check_id)
        assert run.kind == "gated-eval" and run.dataset == locomo.name and run.value is not None
        assert len(run.dataset_sha256) == 64
        expected = "gated-eval" if run.passed else "synthetic"
        assert reports[key].evidence == expected
        assert reports[key].verdict == ("pass" if run.passed else "fail")
    joined = Evidence.objects.get(check_id="r.traversal.locomo_multihop_joined")
    assert 0 <= joined.value <= 1 and joined.detail["questions"] > 0
    value = round(joined.value, 4)  # the detail's shares are rounded to 4 places
    assert 0 <= joined.detail["without_follows"] <= value <= joined.detail["with_hubs"]
    graph = Evidence.objects.get(check_id="r.traversal.locomo_graph_multihop")
    detail = graph.detail
    assert graph.value == pytest.approx(
        detail["multihop_recall_graph"] - detail["multihop_recall_plain"], abs=1e-3
    )
    assert graph.passed == (graph.value >= 0.01)
    assert set(detail["gain_by_category"]) >= {"1"} and detail["questions"] > 0
    threads = Evidence.objects.get(check_id="e.threads.locomo_cothreading")
    detail = threads.detail
    assert detail["evidence_pairs"] > 0 and 0 <= detail["false_grouping"] <= 1
    assert threads.value == pytest.approx(detail["pair_recall"] - detail["false_grouping"], 1e-3)
    assert threads.passed == (threads.value >= 0.30)
    saga = Evidence.objects.get(check_id="e.saga.locomo_multihop_gain")
    detail = saga.detail
    assert detail["questions"] > 0
    assert saga.value == pytest.approx(detail["saga_recall@20"] - detail["plain_recall@20"], 1e-3)
    assert reports["E/threads"].deployment == "pilot (off)"
    assert reports["E/saga"].deployment == "off"


def _locomo_part(path, parts):
    """A LoCoMo-shaped file of the first sessions of some conversations, each under a new name:
    ``parts`` is [(sample_id, sessions, new name)]. Questions are kept when their evidence is in
    those sessions."""
    items = {item["sample_id"]: item for item in json.loads(evaluation_data(*LOCOMO).read_text())}
    cut = []
    for sample_id, sessions, name in parts:
        item = items[sample_id]
        kept = {f"session_{n}" for n in range(1, sessions + 1)}
        conversation = {
            key: value
            for key, value in item["conversation"].items()
            if key.startswith("speaker_") or key in kept or key.removesuffix("_date_time") in kept
        }
        known = {turn["dia_id"] for key in kept for turn in conversation[key]}
        qa = [q for q in item["qa"] if q.get("evidence") and set(q["evidence"]) <= known]
        cut.append({"sample_id": name, "conversation": conversation, "qa": qa})
    path.write_text(json.dumps(cut))
    return path


def test_the_scorer_is_measured_on_any_conversation_it_was_not_fitted_on(db, tmp_path, monkeypatch):
    """Conversations no calibration names: one the scorer never saw is measured, a fitted one
    under another name is recognised by what it says and left out."""
    import hashlib

    from readiness.checks import runner

    monkeypatch.setattr(runner, "SYNTHETIC", {})  # the gated checks alone
    path = _locomo_part(
        tmp_path / "elsewhere.json", [("conv-43", 3, "elsewhere-1"), ("conv-26", 3, "elsewhere-2")]
    )
    out = StringIO()
    call_command("stare-eval", "--locomo", str(path), stdout=out)

    data = path.read_bytes()
    reports = by_key()
    for dim in "STR":
        run = Evidence.objects.get(check_id=f"{dim.lower()}.scorer.locomo_auc")
        assert run.kind == "gated-eval" and 0 <= run.value <= 1
        assert run.detail["measured_on"] == ["elsewhere-1"]
        assert run.detail["fitted_on_skipped"] == ["elsewhere-2"]
        assert run.dataset == "elsewhere.json"
        assert run.dataset_sha256 == hashlib.sha256(data).hexdigest()
        assert run.dataset_bytes == len(data)
        assert reports[f"{dim}/scorer"].verdict == ("pass" if run.passed else "fail")
    evaluation = EvaluationRun.objects.get()
    assert evaluation.datasets["locomo"] == {
        "file": "elsewhere.json",
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
    }
    assert evaluation.finished_at is not None
    assert set(evaluation.evidence.values_list("check_id", flat=True)) >= {"s.scorer.locomo_auc"}
    # What it could not run, and why: data not given.
    assert evaluation.not_run["r.divergence.pairs_auc"].startswith("needs --pairs FILE")
    assert "a.encoding.liar_auc: not run: needs --liar-train FILE --liar-eval FILE" in (
        out.getvalue()
    )

    # Only a fitted conversation: the scorer's checks cannot run, and say so.
    only_fitted = _locomo_part(tmp_path / "fitted.json", [("conv-26", 2, "elsewhere-2")])
    out = StringIO()
    call_command("stare-eval", "--locomo", str(only_fitted), stdout=out)
    said = (
        "s.scorer.locomo_auc: not run: the bundled scorer was fitted on every conversation "
        "given (elsewhere-2); it is measured only on others"
    )
    assert said in out.getvalue()
    assert Evidence.objects.filter(check_id="s.scorer.locomo_auc").count() == 1
    latest = EvaluationRun.objects.latest("id")
    assert set(latest.not_run) >= {"s.scorer.locomo_auc", "t.scorer.locomo_auc"}
    # The learned ranking's model was fitted on it too, and knows it under its new name.
    assert "s.learned.locomo_gain" in latest.not_run
    assert latest.evidence.filter(check_id="s.core.locomo_recall").exists()


def test_a_file_of_another_shape_runs_no_check(db, tmp_path, monkeypatch):
    from readiness.checks import runner

    monkeypatch.setattr(runner, "SYNTHETIC", {})
    path = tmp_path / "other.json"
    path.write_text(json.dumps([{"sample_id": "x", "turns": []}]))
    out = StringIO()
    call_command("stare-eval", "--locomo", str(path), stdout=out)

    assert not Evidence.objects.exists()
    why = "other.json is not LoCoMo-shaped: no field 'conversation'"
    assert f"s.core.locomo_recall: not run: {why}" in out.getvalue()
    assert EvaluationRun.objects.get().not_run["e.saga.locomo_multihop_gain"] == why
    assert "recorded 0 check runs" in out.getvalue()


def test_a_failing_check_fails_the_verdict_and_caps_the_evidence(db):
    cap, synthetic = check("S/core", "s.core.significance_orders")
    _, gated = check("S/core", "s.core.locomo_recall")
    record(cap, synthetic, 1.0)
    record(cap, gated, 0.99)
    assert by_key()["S/core"].verdict == "pass"
    assert by_key()["S/core"].evidence == "gated-eval"

    record(cap, gated, 0.41)  # bad data: the latest run fails

    report = by_key()["S/core"]
    assert report.verdict == "fail" and report.evidence == "synthetic"
    record(cap, synthetic, 0.6)
    assert by_key()["S/core"].evidence == "none"


def test_changed_settings_or_code_make_a_pass_stale(db, settings, monkeypatch):
    cap, synthetic = check("E/anchor", "e.anchor.reply_found")
    record(cap, synthetic, 1.0)
    assert by_key()["E/anchor"].verdict == "pass"

    settings.MM_SEARCH_KEYWORD_WEIGHT = 0.5
    assert by_key()["E/anchor"].verdict == "stale"

    settings.MM_SEARCH_KEYWORD_WEIGHT = 0.6
    assert by_key()["E/anchor"].verdict == "pass"
    monkeypatch.setattr("readiness.report.code_version", lambda c: "another version")
    assert by_key()["E/anchor"].verdict == "stale"


def test_no_pass_without_a_passing_record(db):
    from readiness.evidence import code_version, config_version

    cap, synthetic = check("E/anchor", "e.anchor.reply_found")
    current = {"code_version": code_version(cap), "config_version": config_version(cap)}
    # A row for the current code that says it passed though its value misses the threshold.
    Evidence.objects.create(
        capability=cap.key, check_id=synthetic.id, kind="synthetic", metric="m",
        threshold=synthetic.threshold, value=0.2, passed=True, **current,
    )  # fmt: skip
    assert by_key()["E/anchor"].verdict == "fail"
    # One that passed against an easier threshold than the check's.
    Evidence.objects.create(
        capability=cap.key, check_id=synthetic.id, kind="synthetic", metric="m",
        threshold=0.1, value=0.2, passed=True, **current,
    )  # fmt: skip
    assert by_key()["E/anchor"].verdict == "stale"
    Evidence.objects.all().delete()
    other_cap, other = check("S/core", "s.core.significance_orders")
    record(other_cap, other, 1.0)
    assert by_key()["E/anchor"].verdict == "pending"
    assert all(r.verdict != "pass" for r in readiness_report())


def test_a_check_that_crashes_records_a_failure(db, monkeypatch):
    from readiness import checks

    cap, synthetic = check("E/anchor", "e.anchor.reply_found")
    record(cap, synthetic, 1.0)

    def broken():
        raise RuntimeError("the embedder is gone")

    monkeypatch.setitem(checks.SYNTHETIC, "e.anchor.reply_found", broken)
    checks.run_checks()

    latest = Evidence.objects.filter(check_id=synthetic.id).order_by("-id").first()
    assert latest.value is None and not latest.passed
    assert "the embedder is gone" in latest.detail["error"]
    assert by_key()["E/anchor"].verdict == "fail"


def test_a_failing_synthetic_check_beside_a_passing_gated_one(db):
    cap, synthetic = check("S/core", "s.core.significance_orders")
    _, gated = check("S/core", "s.core.locomo_recall")
    record(cap, synthetic, 0.4)
    record(cap, gated, 0.9)

    report = by_key()["S/core"]
    assert report.verdict == "fail" and report.evidence == "none"


def test_the_table_is_the_seeds_byte_for_byte(db):
    """A fixed set of reports: the Dim column bold with its name, every other cell as code."""
    from dataclasses import replace

    from readiness.registry import NOT_BUILT
    from readiness.report import CapabilityReport

    def fixed(key, implementation, deployment, evidence, verdict):
        cap = replace(capability(key), implementation=implementation)
        return CapabilityReport(cap, deployment, evidence, verdict, [])

    reports = [
        fixed("S/core", "GA", "customer-default", "gated-eval", "pass"),
        fixed("T/core", "GA", "customer-default", "synthetic", "stale"),
        fixed("A/encoding", "beta", "opt-in (opted in)", "gated-eval", "pass"),
        fixed("R/links", "GA", "customer-default (no NER)", "synthetic", "fail"),
        fixed("E/threads", "beta", "pilot (off)", "none", "pending"),
        fixed("E/saga", NOT_BUILT, "off", "none", "pending"),
    ]

    assert table(reports) == (
        "| Dim | Capability | implementation | deployment | evidence | verdict |\n"
        "|---|---|---|---|---|---|\n"
        "| **S (Significance)** | `core` | `GA` | `customer-default` | `gated-eval` | `pass` |\n"
        "| **T (Temporal)** | `core` | `GA` | `customer-default` | `synthetic` | `stale` |\n"
        "| **A (Asymmetry)** | `encoding` | `beta` | `opt-in (opted in)` | `gated-eval` "
        "| `pass` |\n"
        "| **R (Relational)** | `links` | `GA` | `customer-default (no NER)` | `synthetic` "
        "| `fail` |\n"
        "| **E (Episodic)** | `threads` | `beta` | `pilot (off)` | `none` | `pending` |\n"
        "| **E (Episodic)** | `saga` | `not built` | `off` | `none` | `pending` |\n"
    )


def test_every_interface_prints_the_same_table_and_json_keeps_plain_values(db, alice):
    from readiness.mcp import stare_readiness

    cap, synthetic = check("S/core", "s.core.significance_orders")
    record(cap, synthetic, 1.0)
    expected = table(readiness_report())
    body = alice.client.get("/api/v1/readiness").json()
    out = StringIO()
    call_command("readiness", stdout=out)
    tool = stare_readiness(alice.agent, {})

    assert body["table"] == out.getvalue() == expected
    assert tool.content[0].text.startswith(expected)
    assert tool.structured_content["table"] == expected
    seed_row = (
        "| **S (Significance)** | `core` | `GA` | `customer-default` | `synthetic` | `pending` |"
    )
    assert seed_row + "\n" in expected
    first = body["capabilities"][0]
    assert (first["dim"], first["capability"], first["implementation"]) == ("S", "core", "GA")
    assert (first["deployment"], first["evidence"]) == ("customer-default", "synthetic")
    json_out = StringIO()
    call_command("readiness", "--json", stdout=json_out)
    assert json.loads(json_out.getvalue())[0]["verdict"] == "pending"


def test_the_full_report_lists_each_open_check_with_what_it_blocks(db, monkeypatch):
    from readiness import checks
    from readiness.checks import runner
    from readiness.report import full_text

    monkeypatch.setattr(runner, "SYNTHETIC", {})
    checks.run_checks()
    cap, synthetic = check("S/core", "s.core.significance_orders")
    record(cap, synthetic, 1.0)

    text = full_text(readiness_report())

    assert text.startswith(table(readiness_report()) + "\nOpen checks:\n\n- ")
    assert "`s.core.significance_orders`" not in text  # it passes
    line = next(x for x in text.splitlines() if "`s.core.locomo_recall`" in x)
    assert line.startswith("- **S (Significance)** `core`: `s.core.locomo_recall` (`gated-eval`")
    assert "blocks S core as gated-eval" in line
    assert line.endswith("the last evaluation could not run it: needs --locomo FILE "
                         "(LoCoMo-shaped conversations)")  # fmt: skip
    every_open = [k for c in CAPABILITIES for k in c.checks if k.id != synthetic.id]
    for k in every_open:
        assert f"`{k.id}`" in text and k.blocks in text


def _runs(cap, checks_values):
    """One evaluation run per item: {check: value} recorded for the capability."""
    made = []
    for values in checks_values:
        run = EvaluationRun.objects.create(engine_version="0.1.0")
        for chk, value in values.items():
            record(cap, chk, value, dataset="locomo.json", dataset_sha256="ab" * 32, run=run)
        made.append(run)
    return made


def test_the_history_gives_each_run_and_marks_a_changed_verdict(db, alice):
    cap, synthetic = check("S/core", "s.core.significance_orders")
    _, gated = check("S/core", "s.core.locomo_recall")
    runs = _runs(
        cap,
        [
            {synthetic: 1.0, gated: 0.8},
            {synthetic: 1.0, gated: 0.5},
            {synthetic: 1.0},
            {gated: 0.75},
        ],
    )

    body = alice.client.get("/api/v1/readiness/history?capability=S/core").json()

    (history,) = body["capabilities"]
    assert history["key"] == "S/core" and len(history["checks"]) == 2
    points = history["runs"]
    assert [p["run"] for p in points] == [r.pk for r in runs]
    assert [p["verdict"] for p in points] == ["pass", "fail", "fail", "pass"]
    assert [p["changed"] for p in points] == [False, True, False, True]
    assert [p["previous_verdict"] for p in points] == [None, "pass", "fail", "fail"]
    assert points[0]["checks"]["s.core.locomo_recall"] == {
        "value": 0.8, "threshold": 0.7, "passed": True, "dataset": "locomo.json",
        "dataset_sha256": "ab" * 32, "dataset_bytes": None,
    }  # fmt: skip
    assert set(points[2]["checks"]) == {"s.core.significance_orders"}
    from readiness.evidence import code_version, config_version

    assert points[-1]["code_version"] == code_version(cap)
    assert points[-1]["config_version"] == config_version(cap)
    assert points[-1]["engine_version"] == "0.1.0"
    # The latest runs only; the first shown still knows the verdict before it.
    short = alice.client.get("/api/v1/readiness/history?capability=S/core&runs=2").json()
    assert [p["verdict"] for p in short["capabilities"][0]["runs"]] == ["fail", "pass"]
    assert short["capabilities"][0]["runs"][0]["previous_verdict"] == "fail"
    every = alice.client.get("/api/v1/readiness/history").json()["capabilities"]
    assert [h["key"] for h in every] == [c.key for c in CAPABILITIES]
    blank = alice.client.get("/api/v1/readiness/history?capability=").json()["capabilities"]
    assert len(blank) == len(CAPABILITIES)
    assert next(h for h in every if h["key"] == "T/core")["runs"] == []


def test_the_history_judges_each_run_by_its_own_code(db, alice):
    """Evidence for older code is stale after a run of newer code that did not measure it."""
    cap, synthetic = check("S/core", "s.core.significance_orders")
    _, gated = check("S/core", "s.core.locomo_recall")
    (old,) = _runs(cap, [{synthetic: 1.0, gated: 0.9}])
    Evidence.objects.filter(run=old).update(code_version="0" * 64)
    _runs(cap, [{synthetic: 1.0}])

    points = alice.client.get("/api/v1/readiness/history?capability=S/core").json()
    verdicts = [p["verdict"] for p in points["capabilities"][0]["runs"]]

    assert verdicts == ["pass", "stale"]  # the gated row was for the old code
    assert points["capabilities"][0]["runs"][0]["code_version"] == "0" * 64


def test_the_history_refuses_bad_arguments_naming_the_field(db, alice, client):
    for query, field, says in [
        ("runs=0", "runs", "must be 1 to 500."),
        ("runs=501", "runs", "must be 1 to 500."),
        ("runs=many", "runs", "must be an integer."),
        (
            "capability=S/nothing",
            "capability",
            '"S/nothing" is not one of: S/core, S/learned, T/core',
        ),
        ("dim=S", "dim", "is not a known field."),
    ]:
        answer = alice.client.get(f"/api/v1/readiness/history?{query}")
        assert answer.status_code == 400, query
        assert answer.json()[field][0].startswith(says), query
    assert client.get("/api/v1/readiness/history").status_code == 401


def test_the_api_and_the_command_show_the_report(db, alice):
    body = alice.client.get("/api/v1/readiness").json()
    out = StringIO()
    call_command("readiness", "--json", stdout=out)

    assert body["table"].startswith("| Dim | Capability | implementation | deployment |")
    assert [c["verdict"] for c in body["capabilities"]] == ["pending"] * len(CAPABILITIES)
    assert json.loads(out.getvalue())[0]["capability"] == "core"


def test_the_dashboard_page_shows_the_report(client, alice):
    from django.contrib.auth import get_user_model

    from memories.models import Membership

    user = get_user_model().objects.create_user("vic", password="pw")
    Membership.objects.create(user=user, workspace=alice.agent.workspace, role="viewer")
    client.force_login(user)

    page = client.get("/w/acme/readiness").content.decode()

    assert "pending" in page and "s.core.locomo_recall" in page and "a.encoding.liar_auc" in page
    assert "<strong>S (Significance)</strong>" in page
    assert "| **S (Significance)** | `core` |" in page  # the Markdown the copy button copies
    assert "No run has measured it yet." in page
    # Another workspace's page is a 404, like one that does not exist.
    make_actor("globex", "charlie")
    assert client.get("/w/globex/readiness").status_code == 404
    assert client.get("/w/nowhere/readiness").status_code == 404


def test_deployment_follows_the_running_settings(db, settings):
    settings.MM_STARE_AUTO_SKIP_DIMS = "s,a,e"
    settings.MM_EPISODE_WINDOW = 0
    reports = by_key()
    assert reports["S/scorer"].deployment == "off (this install)"
    assert reports["T/scorer"].deployment == "customer-default"
    assert reports["E/anchor"].deployment == "off"


def test_the_traversal_check_fails_when_a_walk_passes_through_what_it_should_not(db, monkeypatch):
    from memories.selectors import traversal
    from readiness.checks import _sandboxed, traversal_as_documented

    assert _sandboxed(traversal_as_documented)[0] == 1.0
    # A walk that ignores what the reader may see.
    original = traversal._walk
    monkeypatch.setattr(
        traversal, "_walk", lambda start, **kw: original(start, **{**kw, "scope_ids": None})
    )
    value, detail = _sandboxed(traversal_as_documented)
    assert value < 1.0 and detail["passed"] < detail["trials"]


def test_the_threads_and_saga_checks_fail_when_stories_are_not_kept_together(db, monkeypatch):
    from consolidation import threads
    from readiness.checks import _sandboxed, saga_as_documented, threads_as_documented

    # Every memory starts a thread of its own: no story is told across sessions.
    monkeypatch.setattr(threads, "score", lambda *args: (0.0, 0.0, 0.0))
    assert _sandboxed(threads_as_documented)[0] < 1.0
    assert _sandboxed(saga_as_documented)[0] < 1.0


LIAR = ("liar",)


def _liar_sample(tmp_path, name, source, rows):
    """The first ``rows`` statements of a LIAR file, as a file of its own."""
    path = tmp_path / name
    path.write_text("".join(source.read_text().splitlines(keepends=True)[:rows]))
    return path


def test_stare_eval_with_liar_records_the_a_scores_auc(db, tmp_path):
    train = _liar_sample(tmp_path, "train.tsv", evaluation_data(*LIAR, "train.tsv"), 400)
    measured = _liar_sample(tmp_path, "valid.tsv", evaluation_data(*LIAR, "valid.tsv"), 150)
    out = StringIO()
    call_command("stare-eval", "--liar-train", str(train), "--liar-eval", str(measured), stdout=out)

    assert "a.encoding.liar_auc: " in out.getvalue()
    evidence = Evidence.objects.get(check_id="a.encoding.liar_auc")
    assert evidence.kind == "gated-eval" and evidence.dataset == "valid.tsv"
    assert 0 <= evidence.value <= 1 and evidence.passed == (evidence.value >= 0.70)
    assert evidence.detail["train"] == "train.tsv"
    assert set(evidence.detail["baselines"]) == {"confidence", "speaker_record", "has_number"}
    assert evidence.detail["positives"] > 0 and evidence.detail["negatives"] > 0
    from memories.models import Memory

    assert not Memory.objects.exists()  # rolled back: only the evidence stays
    with pytest.raises(Exception, match="--liar-eval: needed"):
        call_command("stare-eval", "--liar-train", str(train))
    bad = tmp_path / "bad.tsv"
    bad.write_text("not\ta liar row\n")
    from readiness.checks import NotMeasurable, liar_checks

    with pytest.raises(NotMeasurable, match="bad.tsv:1: not a LIAR row"):
        liar_checks(bad, measured)  # run_checks says the check could not run, and why


def test_the_asymmetry_check_fails_when_feedback_does_not_move_the_records(db, monkeypatch):
    from memories.selectors import sources
    from readiness.checks import _sandboxed, asymmetry_as_documented

    assert _sandboxed(asymmetry_as_documented)[0] == 1.0
    # Records that ignore the verdicts: every source judged as the prior.
    real = sources.source_records

    def ignoring(reader):
        found = real(reader)
        for source in found.sources.values():
            source.estimate = found.prior
        return found

    monkeypatch.setattr("readiness.checks.synthetic.source_records", ignoring)
    assert _sandboxed(asymmetry_as_documented)[0] < 1.0


def test_asymmetry_ranking_refuses_to_start_without_passing_evidence(db, settings):
    from django.core.management.base import SystemCheckError

    from readiness.evidence import code_version, config_version

    settings.MM_ASYMMETRY_RANKING = True
    with pytest.raises(SystemCheckError, match="a.encoding.liar_auc is pending"):
        call_command("check", databases=["default"])
    cap = capability("A/encoding")
    synthetic, gated = cap.checks
    record(cap, synthetic, 1.0)
    record(cap, gated, 0.66, dataset="valid.tsv")
    with pytest.raises(SystemCheckError, match=r"a.encoding.liar_auc is fail \(value 0.66"):
        call_command("check", databases=["default"])
    record(cap, gated, 0.71, dataset="valid.tsv")
    assert code_version(cap) and config_version(cap)
    call_command("check", databases=["default"])  # passes: ranking may use A
    settings.MM_ASYMMETRY_RANKING = False
    record(cap, gated, 0.5, dataset="valid.tsv")
    call_command("check", databases=["default"])  # off: nothing to refuse


def test_the_page_opens_with_what_a_team_can_rely_on(client, alice, settings):
    """Above the table, every capability in one of three groups by whether it is on and
    proven: a capability switched off is under Off, one on without passing evidence under
    Experimental, and the lead sentence counts them."""
    from django.contrib.auth import get_user_model

    from memories.models import Membership
    from readiness.report import readiness_report
    from readiness.views import plain_summary

    settings.MM_SEARCH_LEARNED = False
    user = get_user_model().objects.create_user("vic", password="pw")
    Membership.objects.create(user=user, workspace=alice.agent.workspace, role="viewer")
    client.force_login(user)
    reports = readiness_report()
    groups = plain_summary(reports)
    assert sum(len(g) for g in groups.values()) == len(reports)
    learned = next(r for r in reports if r.deployment.startswith("off (switched off)"))
    assert learned in groups["off"]
    assert all(r.verdict == "pass" and r.capability.implementation == "GA" for r in groups["rely"])
    page = client.get("/w/acme/readiness").content.decode()
    summary = page[page.index('<section class="summary"') : page.index('<table class="readiness')]
    off = summary[summary.index("<h2>Off</h2>") :]
    assert learned.capability.summary in off
    assert f"{len(groups['rely'])} of the engine's {len(reports)} capabilities" in summary
