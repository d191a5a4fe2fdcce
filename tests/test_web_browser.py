"""The web front end in a real browser: headless Chromium driven by Playwright, audited by axe-core.

The browser is Debian's ``chromium`` (``.ci/run`` installs it); Playwright never downloads one. The
flow is a student's: open the curriculum, start a problem, read the maths, fill a matrix grid with the
keyboard (Tab between cells), get "Correct.", submit a known mistake and see its name, take a hint, ask
for another variant, show the solution, reload and find the progress kept. Every page is audited with
axe-core (shipped by axe-playwright-python) for serious or critical accessibility violations.
"""

from __future__ import annotations

import re
import shutil
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).exists()), None)
if CHROMIUM is None:
    pytest.skip("Chromium is not installed (apt-get install chromium); browser tests skipped",
                allow_module_level=True)
pytest.importorskip("flask", reason="the web extra (flask) is not installed")
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (test extra)")
axe_module = pytest.importorskip("axe_playwright_python.sync_playwright",
                                 reason="axe-playwright-python is not installed (test extra)")

from problemgen.model import registry  # noqa: E402
from problemgen.sheets.answersheet import key_value, toml_value  # noqa: E402

CHECKOUT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from problemgen.practice.web.app import create_app
    from problemgen.practice.web.server import practice_server

    with pytest.MonkeyPatch.context() as patch:  # this checkout's page templates, not an installed copy's
        patch.setattr("problemgen.practice.web.app.templates_dir", lambda: CHECKOUT / "templates")
        app = create_app(tmp_path_factory.mktemp("web") / "progress.sqlite3")
    httpd = practice_server("127.0.0.1", 0, app)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def page(server):
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context()
        context.route(re.compile(r"^(?!http://127\.0\.0\.1:)"), lambda route: route.abort())  # offline
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.errors = errors
        yield page
        browser.close()


def ready(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("html[data-ready]")


def shown_problem(page):
    """The problem on screen, regenerated from the variant id the page prints (kind/dN/sSEED)."""
    variant = page.locator(".unitline .kind").inner_text()
    kind, difficulty, seed = re.fullmatch(r"(.+)/d(\d+)/s(\d+)", variant).groups()
    return registry.generate(kind, int(seed), int(difficulty))


def new_problem_after(page, button: str) -> None:
    """Click ``button`` and wait until the page shows a different variant, ready for input."""
    before = page.locator(".unitline .kind").inner_text()
    page.get_by_role("button", name=button).click()
    playwright.expect(page.locator(".unitline .kind")).not_to_have_text(before)
    page.wait_for_selector("html[data-ready]")


def cell_texts(value) -> list[str]:
    rows = value if isinstance(value, list) and value and isinstance(value[0], list) else [value]
    return [toml_value(x).strip('"') for row in rows for x in row]


def fill(page, part, value) -> None:
    """Type an answer the way a keyboard user does: the first cell, then Tab to each next cell."""
    fieldset = page.locator(f'fieldset[data-part="{part.key}"]')
    widget = fieldset.get_attribute("data-widget")
    if widget == "grid":
        fieldset.locator("input.cell").first.focus()
        for index, text in enumerate(cell_texts(value)):
            if index:
                page.keyboard.press("Tab")
            page.keyboard.type(text)
    elif widget == "choice":
        for option in value if isinstance(value, list) else [value]:
            fieldset.locator(f'input[value="{option}"]').check()
    else:
        fieldset.locator("input.text").fill(toml_value(value).strip('"') if isinstance(value, str) else toml_value(value))


def audit(page) -> list[str]:
    results = axe_module.Axe().run(page)
    return [f"{v['id']} ({v['impact']}): {v['help']}" for v in results.response["violations"]
            if v["impact"] in ("serious", "critical")]


def test_a_student_practises_in_the_browser(page, server):
    ready(page, server + "/")
    assert page.get_by_role("heading", name="Curriculum").is_visible()
    assert audit(page) == []
    page.get_by_role("button", name="Practise what is next").click()
    page.wait_for_url("**/practice")
    page.wait_for_selector("html[data-ready]")

    # maths rendered as MathML, no raw TeX left
    assert page.locator(".prompt math").count() > 0
    assert "$" not in page.locator("main").inner_text()
    assert audit(page) == []

    # a matrix grid filled with the keyboard -> correct
    problem = shown_problem(page)
    grid_parts = [p for p in problem.parts if p.type in ("matrix", "mask")]
    assert grid_parts, f"the first problem ({problem.kind}) should be answered with a grid"
    part = grid_parts[0]
    fill(page, part, key_value(part))
    page.locator(f'fieldset[data-part="{part.key}"] .preview-value math').wait_for()  # live "read as"
    page.keyboard.press("Enter")
    feedback = page.locator(f'fieldset[data-part="{part.key}"] .feedback')
    feedback.get_by_text("Correct.").wait_for()

    # reload: the answered part is still done (the store is the only state)
    ready(page, server + "/practice")
    assert "Correct." in page.locator(f'fieldset[data-part="{part.key}"] .feedback').inner_text()

    # finish the problem, then go on to one with a known mistake and submit that mistake
    for other in [p for p in problem.parts if p.key != part.key]:
        fill(page, other, key_value(other))
        page.locator(f'fieldset[data-part="{other.key}"] button.submit').click()
        page.locator(f'fieldset[data-part="{other.key}"] .feedback').get_by_text("Correct.").wait_for()
    new_problem_after(page, "Next problem")
    for _ in range(12):
        problem = shown_problem(page)
        found = [(p, m) for p in problem.parts for m in p.mistakes if p.type != "choice"]
        if found:
            break
        new_problem_after(page, "Skip")
    else:
        pytest.fail("no problem with a known mistake came up")
    part, mistake = found[0]
    value = mistake.value
    if part.type == "mask":
        from problemgen.sheets.answersheet import _mask_in

        value = _mask_in(value, part.spec.get("representation", "bool"))
    fill(page, part, value)
    page.locator(f'fieldset[data-part="{part.key}"] button.submit').click()
    from problemgen.misconceptions.catalogue import describe

    feedback = page.locator(f'fieldset[data-part="{part.key}"] .feedback')
    feedback.get_by_text("Wrong.").wait_for()
    assert describe(mistake.name) in feedback.inner_text()

    # hint, another variant, solution
    page.get_by_role("button", name="Hint").focus()  # keyboard only: focus and Enter
    page.keyboard.press("Enter")
    page.locator(".hints").get_by_text("Hint 1:").wait_for()
    new_problem_after(page, "Another variant")
    page.get_by_role("button", name="Show solution").focus()
    page.keyboard.press("Enter")
    page.locator(".solution-box").get_by_text("Worked solution").wait_for()
    assert page.locator(".solution-box math").count() > 0
    assert page.get_by_role("button", name="Next problem").is_visible()
    assert audit(page) == []

    # reload the curriculum: the first item counts (shown and right unaided)
    ready(page, server + "/")
    assert "1 of 1" in page.locator("table.skills").first.inner_text()
    ready(page, server + "/progress")
    assert describe(mistake.name) in page.locator("table.mistakes").inner_text()
    assert audit(page) == []
    assert page.errors == []


def test_a_reload_shows_again_the_hints_already_given(page, server):
    """After a reload the page said how many hints were used, but their texts were gone: they are now
    shown again, in the Hints region and with the markup the Hint button gave them."""
    ready(page, server + "/")
    page.get_by_role("button", name="Practise what is next").click()
    page.wait_for_url("**/practice")
    page.wait_for_selector("html[data-ready]")
    given = page.locator(".hints p:not(.note)")
    before = given.count()
    for asked in (1, 2):
        page.get_by_role("button", name="Hint").click()
        playwright.expect(given).to_have_count(before + asked)
    as_given = given.evaluate_all("ps => ps.map(p => p.outerHTML)")
    last = given.last.inner_text()
    assert last.startswith("Hint 2: ")

    ready(page, server + "/practice")
    assert given.evaluate_all("ps => ps.map(p => p.outerHTML)") == as_given
    assert page.get_by_role("region", name="Hints").get_by_text(last, exact=True).is_visible()
    assert "2 hints used" in page.locator(".hints .note").inner_text()
    page.get_by_role("button", name="Hint").click()  # goes on from the level reached
    playwright.expect(given.last).to_have_text(re.compile(r"^Hint 3: "))
    assert audit(page) == []
    assert page.errors == []


def test_the_bank_preview_shows_keys_and_heatmaps_and_passes_the_audit(page, server):
    ready(page, server + "/bank/attention_basics")
    page.locator("summary", has_text="Key").first.click()
    assert page.locator("details[open] .key math").count() > 0
    assert page.locator("table.heatmap").count() > 0
    assert audit(page) == []
    assert page.errors == []


def test_a_second_tab_on_a_problem_finished_elsewhere_moves_on(page, server):
    """The page once showed the 409 in green and left every button live; it now says so as a warning,
    closes the problem and offers the next one, with focus on it."""
    ready(page, server + "/")
    page.get_by_role("button", name="Practise what is next").click()
    page.wait_for_url("**/practice")
    other = page.context.new_page()
    ready(other, server + "/practice")
    ready(page, server + "/practice")
    page.get_by_role("button", name="Show solution").click()
    page.get_by_role("button", name="Next problem").wait_for()
    other.get_by_role("button", name="Hint").click()
    warning = other.locator(".report p.warn")
    warning.get_by_text("closed").wait_for()
    assert warning.evaluate("p => getComputedStyle(p).color") == "rgb(122, 74, 0)"  # --warn, not --good
    next_problem = other.get_by_role("button", name="Next problem")
    assert next_problem.is_visible() and next_problem.evaluate("b => b === document.activeElement")
    assert other.get_by_role("button", name="Hint").is_hidden()
    other.close()
    assert page.errors == []


def test_a_wrong_answer_sent_with_the_check_button_keeps_keyboard_focus(page, server):
    """Disabling the focused Check button while it waited dropped focus to the page body."""
    ready(page, server + "/")
    page.get_by_role("button", name="Practise what is next").click()
    page.wait_for_url("**/practice")
    page.wait_for_selector("html[data-ready]")
    fieldset = page.locator("fieldset.part:not(.done)").first
    submit = fieldset.locator("button.submit")
    submit.focus()
    page.keyboard.press("Enter")  # blank: "I could not read that"
    fieldset.locator(".feedback").get_by_text("I could not read that").wait_for()
    playwright.expect(submit).to_be_enabled()
    assert submit.evaluate("b => b === document.activeElement")


def test_a_grid_fits_a_narrow_phone_screen_without_sideways_scrolling_of_the_page(page, server):
    """At 360 px a wide grid once widened its part, pushing labels and feedback off the screen."""
    page.set_viewport_size({"width": 360, "height": 740})
    try:
        for path in ("/bank/attention_basics", "/bank/masking", "/practice"):
            ready(page, server + path)
            assert page.evaluate("document.documentElement.scrollWidth") <= 360 + 1, path
            assert audit(page) == [], path
    finally:
        page.set_viewport_size({"width": 1280, "height": 720})
