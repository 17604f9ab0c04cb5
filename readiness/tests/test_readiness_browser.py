"""The readiness page in headless Chromium: each capability's evidence over time as a chart,
the changed verdicts marked, and the copy button that copies the seed's table."""

from memories.tests.test_browser import (  # noqa: F401 (fixtures)
    SCREENSHOTS,
    browser,
    log_in,
    shot,
    team,
)
from readiness.evidence import record
from readiness.models import EvaluationRun
from readiness.registry import capability
from readiness.report import readiness_report, table


def _record_runs():
    """S/core: pass, then fail, then pass again; E/anchor: passing every time."""
    core = capability("S/core")
    synthetic, gated = core.checks
    anchor = capability("E/anchor")
    for value in (0.81, 0.52, 0.78):
        run = EvaluationRun.objects.create(engine_version="0.1.0")
        record(core, synthetic, 1.0, run=run)
        record(core, gated, value, dataset="locomo.json", dataset_sha256="ab" * 32, run=run)
        record(anchor, anchor.checks[0], 1.0, run=run)


def test_the_readiness_page_charts_the_history_and_copies_the_table(browser, live_server, team):  # noqa: F811
    _record_runs()
    base = live_server.url
    context = browser.new_context(
        viewport={"width": 1200, "height": 900}, permissions=["clipboard-read", "clipboard-write"]
    )
    page = context.new_page()
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "vic")  # a viewer of acme
    page.fill("#id_password", "pw")
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/w/**")

    page.goto(f"{base}/w/acme/readiness")

    # It opens with the table; the history and the checks are folded until asked for.
    assert page.locator("table.readiness").is_visible()
    assert not page.locator("#history-S-core").is_visible()
    checks = [c for r in readiness_report() for c in r.checks]
    failing = sum(c.status != "pass" for c in checks)
    assert (
        f"({failing} of {len(checks)} not passing)" in page.locator("#checks summary").inner_text()
    )
    assert not page.locator("#checks table").is_visible()
    shot(page, "readiness-folded")
    page.click("#evidence-over-time > summary")
    core = page.locator("#history-S-core")
    assert "3 runs" in core.inner_text()
    gated = core.locator("figure", has_text="s.core.locomo_recall")
    assert gated.locator("circle.pass").count() == 2 and gated.locator("circle.fail").count() == 1
    assert gated.locator("line.change").count() == 2  # pass → fail, fail → pass
    assert gated.locator("line.threshold").count() == 1
    assert "changed from fail" in core.inner_text()
    assert core.locator("ul.changes li").count() == 2
    anchor = page.locator("#history-E-anchor")
    assert anchor.locator("line.change").count() == 0 and "changed" not in anchor.inner_text()
    assert "No run has measured it yet." in page.locator("#history-T-core").inner_text()
    title = gated.locator("circle.fail title").text_content()
    assert "0.52 (threshold 0.7)" in title

    page.click("button:has-text('Copy the table as Markdown')")
    page.wait_for_selector("text=Copied.")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == table(readiness_report())
    row = "| **S (Significance)** | `core` | `GA` | `customer-default` | `gated-eval` | `pass` |"
    assert row in copied
    shot(page, "readiness-history")
    core.screenshot(path=str(SCREENSHOTS / "readiness-history-s-core.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scroll
    shot(page, "readiness-history-narrow")
    context.close()


def test_a_user_of_another_workspace_gets_404_for_its_readiness_page(browser, live_server, team):  # noqa: F811
    page = log_in(browser, live_server.url, "gus")  # globex only
    answer = page.goto(f"{live_server.url}/w/acme/readiness")
    assert answer.status == 404
    assert page.goto(f"{live_server.url}/w/globex/readiness").status == 200
