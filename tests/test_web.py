"""The web front end through its HTTP interface (Flask's test client): pages, the practice API, safety.

Every answer a test submits is computed from the regenerated problem's key (``answersheet.key_value``,
the value the answer key prints), so the tests exercise the same reader and practice rules as the quiz.
Real-browser tests (Chromium) are in ``test_web_browser.py``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest
from markupsafe import escape

pytest.importorskip("flask", reason="the web extra (flask) is not installed")
pytest.importorskip("latex2mathml", reason="the web extra (latex2mathml) is not installed")

from problemgen.model import registry  # noqa: E402
from problemgen.practice.progress import ProgressStore  # noqa: E402
from problemgen.practice.rules import load_curriculum, summary  # noqa: E402
from problemgen.practice.web.app import create_app  # noqa: E402
from problemgen.practice.web.inputs import answer_text, grid_text, widget_for  # noqa: E402
from problemgen.practice.web.mathml import fragment_html  # noqa: E402
from problemgen.sheets.answersheet import key_value, toml_value  # noqa: E402

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def db(tmp_path):
    return tmp_path / "progress.sqlite3"


CHECKOUT_TEMPLATES = Path(__file__).resolve().parents[1] / "templates"


@pytest.fixture(autouse=True)
def checkout_templates(monkeypatch):
    """The page templates of this checkout: an editable install of another checkout serves its own
    ``problemgen.templates``, so a template change here would go untested."""
    monkeypatch.setattr("problemgen.practice.web.app.templates_dir", lambda: CHECKOUT_TEMPLATES)


@pytest.fixture
def client(db):
    app = create_app(db, clock=lambda: NOW)
    client = Client(app.test_client())
    client.db = db
    return client


class Client:
    """The test client with the page token a real page would send."""

    def __init__(self, raw):
        self.raw = raw
        page = raw.get("/").get_data(as_text=True)
        self.token = re.search(r'name="problemgen-token" content="([^"]+)"', page).group(1)

    def get(self, url):
        return self.raw.get(url)

    def post(self, url, body=None, **headers):
        return self.raw.post(url, json=body or {}, headers={"X-Problemgen-Token": self.token, **headers})

    def api(self, url, body=None):
        response = self.get(url) if url in ("/api/current", "/api/progress") else self.post(url, body)
        assert response.status_code == 200, response.get_json()
        return response.get_json()


def problem_of(item: dict):
    return registry.generate(item["kind"], item["seed"], item["difficulty"])


def key_payload(part) -> dict:
    """What a student who knows the answer posts: the grid cells, the options, or the typed key."""
    widget = widget_for(part)
    value = key_value(part)
    if widget.kind == "grid":
        rows = value if not widget.vector else [value]
        return {"cells": [[toml_value(x).strip('"') for x in row] for row in rows]}
    if widget.kind == "choice":
        return {"choice": value if isinstance(value, list) else [value]}
    return {"text": toml_value(value).strip('"') if isinstance(value, str) else toml_value(value)}


def answer_all(client: Client, item: dict) -> list[dict]:
    problem = problem_of(item)
    return [client.api("/api/answer", {"item": item["item"], "part": p.key, **key_payload(p)})
            for p in problem.parts]


# ----------------------------------------------------------------------------------------- maths


def test_every_kind_renders_as_mathml_with_no_raw_dollar_left():
    from problemgen.documents.rendering import render_block

    registry.load_all()
    for spec in registry.all_kinds():
        problem = registry.generate(spec.name, 11, spec.difficulties[-1])
        for block in ("prompt", "solution"):
            html = str(fragment_html(render_block(problem, block, "md")))
            assert "$" not in html, (spec.name, block)
            assert 'class="tex"' not in html, f"{spec.name} {block}: a formula the converter could not read"


def test_prose_is_escaped_so_no_markup_can_be_injected():
    html = str(fragment_html("<script>alert(1)</script> and $x^2$"))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<math" in html


def test_a_plain_label_or_title_stays_literal_but_for_its_maths():
    """Labels, options and mistake titles are plain text: stars and backticks are not Markdown there."""
    from problemgen.practice.web.mathml import text_html

    html = str(text_html("exp(x), not 2**x or 10**x; `k` \\* <b> $x^2$"))
    assert html.startswith("exp(x), not 2**x or 10**x; `k` \\* &lt;b&gt; <math") and "<strong>" not in html


# ------------------------------------------------------------------------------------------ pages


def test_pages_render_with_maths_and_the_curriculum(client):
    page = client.get("/").get_data(as_text=True)
    for unit in load_curriculum().units:
        assert unit.title in page
    item = client.api("/api/start")
    practice = client.get("/practice").get_data(as_text=True)
    assert problem_of(item).title in practice and "<math" in practice
    assert client.get("/progress").status_code == 200


def test_bank_preview_shows_every_problem_with_key_and_solution_and_a_new_variant(client):
    page = client.get("/bank/attention_basics").get_data(as_text=True)
    from problemgen.documents.banks import load_bank, resolve_bank

    bank = load_bank(resolve_bank("attention_basics"))
    assert page.count("<summary>Key</summary>") == bank.size
    assert page.count("<summary>Worked solution</summary>") == bank.size
    assert 'class="heatmap"' in page  # the bank has attention weights
    other = client.get(f"/bank/attention_basics?seed={bank.seed + 1}").get_data(as_text=True)
    assert other != page
    one = client.get(f"/bank/attention_basics/p1?seed={bank.seed}").get_data(as_text=True)
    redrawn = client.get(f"/bank/attention_basics/p1?seed={bank.seed}&variant=1").get_data(as_text=True)
    assert one.count("<summary>Key</summary>") == redrawn.count("<summary>Key</summary>") == 1
    variant_of = re.compile(r'<span class="kind">([^<]+)</span>')
    assert variant_of.search(one).group(1) != variant_of.search(redrawn).group(1)
    assert variant_of.search(one).group(1).split("/")[0] == variant_of.search(redrawn).group(1).split("/")[0]
    assert client.get("/bank/attention_basics/p999").status_code == 404


def test_files_outside_the_package_and_unknown_banks_are_not_served(client):
    for url in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2f..%2fprogress.py",
                "/bank/..%2fcurriculum", "/bank/curriculum", "/bank/%2fetc%2fpasswd", "/etc/passwd"):
        assert client.raw.get(url, follow_redirects=True).status_code == 404, url
    assert client.get("/static/app.js").status_code == 200


# --------------------------------------------------------------------------------------- security


def test_posts_without_the_page_token_or_from_another_origin_are_refused(client, db):
    assert client.raw.post("/api/start", json={}).status_code == 403
    assert client.raw.post("/api/start", json={}, headers={"X-Problemgen-Token": "guess"}).status_code == 403
    assert client.post("/api/start", Origin="http://evil.example").status_code == 403
    assert client.post("/api/start", **{"Sec-Fetch-Site": "cross-site"}).status_code == 403
    with ProgressStore(db) as store:
        assert store.items() == []  # nothing was written by the refused requests
    assert client.post("/api/start", Origin="http://localhost").status_code == 200


def test_a_rebound_host_name_gets_neither_the_page_nor_the_api(db):
    """DNS rebinding: attacker.example re-pointed to 127.0.0.1 made the browser send Host and Origin
    attacker.example, and the Origin check compared the two; the page (with its token) and a POST got 200."""
    raw = create_app(db, clock=lambda: NOW).test_client()
    served = {"base_url": "http://127.0.0.1:8765"}  # SERVER_NAME and SERVER_PORT as a server bound there
    page = raw.get("/", headers={"Host": "attacker.example:8765"}, **served)
    assert page.status_code == 403 and "problemgen-token" not in page.get_data(as_text=True)
    assert page.get_json() == {
        "error": "unknown Host 'attacker.example:8765': open this page at http://127.0.0.1:8765/"}
    token = re.search(r'name="problemgen-token" content="([^"]+)"', raw.get("/", **served).get_data(as_text=True))[1]
    posted = raw.post("/api/start", json={}, headers={
        "Host": "attacker.example:8765", "Origin": "http://attacker.example:8765", "Sec-Fetch-Site": "same-origin",
        "X-Problemgen-Token": token}, **served)
    assert posted.status_code == 403
    with ProgressStore(db) as store:
        assert store.items() == []


@pytest.mark.parametrize("host, expected", [
    ("127.0.0.1:8765", 200), ("localhost:8765", 200), ("LOCALHOST:8765", 200), ("[::1]:8765", 200),
    ("localhost:8766", 403), ("localhost", 403), ("127.0.0.1.nip.io:8765", 403), ("10.0.0.7:8765", 403),
    ("", 403), ("localhost:8765@attacker.example", 403), ("[:8765", 403)])
def test_only_loopback_names_at_the_server_s_port_are_served(db, host, expected):
    raw = create_app(db, clock=lambda: NOW).test_client()
    assert raw.get("/", headers={"Host": host}, base_url="http://127.0.0.1:8765").status_code == expected


def test_a_server_given_a_host_answers_to_it_and_on_every_interface_to_ip_addresses(db):
    named = create_app(db, clock=lambda: NOW, hosts=["Study.lan"]).test_client()
    assert named.get("/", headers={"Host": "study.lan:8765"}, base_url="http://192.168.1.7:8765").status_code == 200
    assert named.get("/", headers={"Host": "192.168.1.7:8765"}, base_url="http://192.168.1.7:8765").status_code == 200
    assert named.get("/", headers={"Host": "other.lan:8765"}, base_url="http://192.168.1.7:8765").status_code == 403
    anywhere = create_app(db, clock=lambda: NOW).test_client()
    for host, expected in (("10.0.0.7:8765", 200), ("[fe80::1]:8765", 200), ("attacker.example:8765", 403)):
        reply = anywhere.get("/", headers={"Host": host}, base_url="http://0.0.0.0:8765")
        assert reply.status_code == expected, host


def test_a_malformed_origin_is_refused_not_a_server_error(client):
    """``Origin: http://[`` made urlsplit raise ValueError in the origin check: a 500."""
    for origin in ("http://[", "http://localhost:99999999", "null", "http://localhost@attacker.example"):
        reply = client.post("/api/start", Origin=origin)
        assert reply.status_code == 403 and reply.get_json() == {"error": "cross-origin request refused"}, origin


def test_pages_forbid_framing_and_off_site_resources(client):
    response = client.get("/")
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Frame-Options"] == "DENY"


def test_hostile_answers_are_invalid_never_evaluated(client):
    item = client.api("/api/start")
    part = problem_of(item).parts[0]
    for text in ("__import__('os').system('true')", "1" * 5000, "lambda: 1", "[[1, 2], [3"):
        reply = client.post("/api/answer", {"item": item["item"], "part": part.key, "text": text})
        assert reply.status_code == 200 and reply.get_json()["status"] in ("invalid", "wrong")
    assert client.post("/api/answer", {"item": item["item"], "part": "nope", "text": "1"}).status_code == 400
    assert client.post("/api/answer", {"item": "1", "part": part.key}).status_code == 400
    assert client.post("/api/answer", {"item": item["item"] + 1, "part": part.key, "text": "1"}).status_code == 409


def test_an_answer_holding_a_lone_surrogate_is_graded_and_kept(client):
    """JSON may carry \\ud800, which is not encodable text: the answer is graded (invalid: not ASCII) and
    stored as its escape, where it used to fail the request with a server error."""
    import sqlite3

    item = client.api("/api/start")
    part = problem_of(item).parts[0]
    reply = client.post("/api/answer", {"item": item["item"], "part": part.key, "text": "1\ud800"})
    assert reply.status_code == 200 and reply.get_json()["status"] == "invalid"
    with sqlite3.connect(client.db) as connection:
        assert connection.execute("SELECT text FROM answers").fetchall() == [("1\\ud800",)]


# ------------------------------------------------------------------------------- malformed requests


def test_a_seed_or_variant_in_non_ascii_digits_is_ignored_not_a_server_error(client):
    """``str.isdigit`` accepts ``²`` and ``¹``, which ``int`` refuses: these were 500s."""
    default = client.get("/bank/attention_basics").get_data(as_text=True)
    superscript = client.get("/bank/attention_basics?seed=%C2%B2")
    assert superscript.status_code == 200 and superscript.get_data(as_text=True) == default
    assert client.get("/bank/attention_basics/p1?variant=%C2%B9").status_code == 200
    assert client.get("/bank/attention_basics?seed=%EF%BC%97").status_code == 200  # a full-width 7


def test_a_deeply_nested_json_body_is_a_400_with_a_message(client):
    """A thousand nested lists made the JSON parser raise RecursionError, which was a 500 HTML page."""
    nested = "[" * 1000 + "]" * 1000
    for url in ("/api/start", "/api/answer", "/api/hint"):
        reply = client.raw.post(url, data=nested, content_type="application/json",
                                headers={"X-Problemgen-Token": client.token})
        assert reply.status_code == 400, url
        assert reply.get_json() == {"error": "the request body is not readable JSON"}


def test_an_api_error_is_one_line_of_json_and_never_a_traceback(client, monkeypatch):
    """The page script parses every API reply as JSON: an HTML error page showed as a JSON parse error."""
    from problemgen.practice.web.engine import Practice

    def broken(self, item_id):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(Practice, "hint", broken)
    item = client.api("/api/start")
    for reply, status in ((client.post("/api/hint", {"item": item["item"]}), 500),
                          (client.get("/api/nowhere"), 404), (client.get("/api/start"), 405)):
        assert reply.status_code == status and reply.is_json, reply.get_data(as_text=True)
        error = reply.get_json()["error"]
        assert error and "\n" not in error and "secret" not in error and "Traceback" not in error
    assert client.get("/nowhere").status_code == 404  # pages keep Flask's own answer


# ---------------------------------------------------------------------------------------- practice


def test_grid_cells_are_joined_into_the_reader_s_nested_array_with_fractions_quoted():
    from problemgen.model.core import AnswerPart

    part = AnswerPart("w", "matrix", [[0.5, 0.5], [0.25, 0.75]], atol=1e-3)
    text = grid_text(widget_for(part), [["1/2", "0.5"], [".25", "3/4"]])
    assert text == '[["1/2", 0.5], [".25", "3/4"]]'
    from problemgen.sheets.grading import grade_text

    assert grade_text(part, text).status == "correct"
    assert grade_text(part, answer_text(part, {"cells": [["1/3", "0.5"], ["0.25", "0.75"]]})).status == "wrong"


def test_a_known_mistake_is_named_with_its_hint(client):
    item = client.api("/api/start", {"unit": "attention"})
    for _ in range(12):
        problem = problem_of(item)
        found = [(p, m) for p in problem.parts for m in p.mistakes]
        if found:
            break
        item = client.api("/api/skip", {"item": item["item"]})
    part, mistake = found[0]
    payload = key_payload(part.__class__(**{**part.__dict__, "value": mistake.value}))
    reply = client.api("/api/answer", {"item": item["item"], "part": part.key, **payload})
    from problemgen.misconceptions.catalogue import describe

    assert reply["status"] == "wrong"
    assert reply["mistake"] == mistake.name and reply["mistake_title"] == describe(mistake.name)
    assert reply["mistake_hint"] == mistake.hint


def test_an_answer_reads_the_whole_history_only_to_derive_the_units_state(client, monkeypatch):
    """Finding the current item read every item of the history (``items()[-1]``), three times per answer:
    with 20,000 answers stored, an answer took 0.40 s of CPU and starting a problem 0.54 s (0.06 s and
    0.07 s now). The latest item is one row; only mastery needs the history."""
    item = client.api("/api/start", {"unit": "attention"})
    while len(problem_of(item).parts) < 2:
        item = client.api("/api/skip", {"item": item["item"]})
    reads = []
    real = ProgressStore.items
    monkeypatch.setattr(ProgressStore, "items", lambda self, *a: reads.append(a) or real(self, *a))
    first = problem_of(item).parts[0]
    reply = client.api("/api/answer", {"item": item["item"], "part": first.key, **key_payload(first)})
    assert reply["status"] == "correct" and not reply["item_complete"]
    assert len(reads) == 1  # the unit's state before the answer


def test_hints_go_up_a_level_and_the_solution_ends_the_item(client, db):
    item = client.api("/api/start")
    first, second = client.api("/api/hint", {"item": item["item"]}), client.api("/api/hint", {"item": item["item"]})
    assert (first["level"], second["level"]) == (1, 2) and first["text"] != second["text"]
    solution = client.api("/api/solution", {"item": item["item"]})
    assert "Worked solution" in solution["html"] and "<math" in solution["html"]
    with ProgressStore(db) as store:
        record = store.items()[-1]
    assert (record.outcome, record.hints) == ("revealed", 2)
    assert client.api("/api/current") is None


def test_each_part_has_its_own_hint_levels_as_in_the_terminal_quiz(client):
    item = client.api("/api/start")
    problem = problem_of(item)
    assert len(problem.parts) >= 2  # precondition: the first problem of the curriculum has several parts
    hint = lambda: client.api("/api/hint", {"item": item["item"]})  # noqa: E731
    assert [hint()["level"] for _ in range(3)] == [1, 2, 3]
    first = problem.parts[0]
    client.api("/api/answer", {"item": item["item"], "part": first.key, **key_payload(first)})
    assert hint()["level"] == 1  # the second part starts from the most general hint


def hints_shown(page: str) -> list[str]:
    """The hint paragraphs of a problem page's Hints section, as HTML (the note on hints used left out)."""
    section = re.search(r'<section class="hints"[^>]*>(.*?)</section>', page, re.S).group(1)
    return [p for p in re.findall(r"<p[^>]*>.*?</p>", section, re.S) if not p.startswith('<p class="note">')]


def as_page_shows(hint: dict) -> str:
    """A hint as the page's script adds it when asked: one paragraph of text (textContent)."""
    return f"<p>Hint {hint['level']}: {escape(hint['text'])}</p>"


def test_a_reloaded_page_shows_again_the_hints_already_given_without_counting_them(client, db):
    """After a reload the page said "3 hint(s) used" but the hints themselves were gone; it now shows
    each part's hints again, as they were given, and the store counts none of them a second time."""
    item = client.api("/api/start")
    first = problem_of(item).parts[0]
    given = [client.api("/api/hint", {"item": item["item"]}) for _ in range(2)]
    client.api("/api/answer", {"item": item["item"], "part": first.key, **key_payload(first)})
    given.append(client.api("/api/hint", {"item": item["item"]}))  # the second part's first hint
    assert [h["level"] for h in given] == [1, 2, 1]
    for _ in range(2):  # a reload shows them; showing them changes nothing a reload could see
        page = client.get("/practice").get_data(as_text=True)
        assert hints_shown(page) == [as_page_shows(h) for h in given]
        assert "3 hints used" in page
    with ProgressStore(db) as store:
        assert store.items()[-1].hints == 3 and store.items()[-1].outcome is None
    assert client.api("/api/progress")["units"][0]["progress"] == 0
    assert client.api("/api/hint", {"item": item["item"]})["level"] == 2  # goes on from the level reached


def test_hints_the_terminal_quiz_gave_come_back_on_the_page_as_the_terminal_printed_them(client, db):
    """Switching from `problemgen quiz` to the page on one progress file: the problem is resumed with
    the hints the terminal gave, in its words."""
    from problemgen.practice.quiz import Console, QuizSession
    from problemgen.practice.services import default_services

    typed, printed = ["hint", "hint", "quit"], []

    def read(prompt: str) -> str:
        if not typed:
            raise EOFError
        return typed.pop(0)

    with ProgressStore(db) as store:
        QuizSession(store, load_curriculum(), Console(read, printed.append), default_services(),
                    clock=lambda: NOW).run()
    hints = [line for line in "".join(printed).splitlines() if line.startswith("Hint ")]
    assert len(hints) == 2
    assert hints_shown(client.get("/practice").get_data(as_text=True)) == [f"<p>{escape(h)}</p>" for h in hints]


def test_a_hint_shown_again_is_text_as_when_first_given_never_markup(db):
    """The page's script adds a hint as text; shown again by the server it must be escaped alike."""
    curriculum = load_curriculum()
    hostile = '<img src=x onerror="alert(1)"> & <b>scores</b>'
    curriculum = replace(curriculum, units=tuple(replace(u, hint=hostile, kind_hints={}) for u in curriculum.units))
    client = Client(create_app(db, clock=lambda: NOW, curriculum=curriculum).test_client())
    item = client.api("/api/start")
    hint = client.api("/api/hint", {"item": item["item"]})
    assert hint["text"] == hostile
    page = client.get("/practice").get_data(as_text=True)
    assert hints_shown(page) == [as_page_shows(hint)]
    assert "<img" not in page and "&lt;img src=x onerror=&#34;alert(1)&#34;&gt; &amp; &lt;b&gt;" in page


def test_a_hint_level_far_past_the_last_hint_is_shown_as_one_line(client, db):
    """Hints past the last level all said "no more hints"; one line at the level reached stands for
    them, so a level edited into the file by hand cannot make the page write millions of lines."""
    from problemgen.practice.hints import NO_MORE

    item = client.api("/api/start")
    given = client.api("/api/hint", {"item": item["item"]})
    with ProgressStore(db) as store:
        store._db.execute("UPDATE hints SET level = 10000000000 WHERE item_id = ?", (item["item"],))
    shown = hints_shown(client.get("/practice").get_data(as_text=True))
    assert shown[0] == as_page_shows(given) and len(shown) <= 6
    assert shown[-1] == as_page_shows({"level": 10000000000, "text": NO_MORE})


def test_resuming_a_problem_makes_it_once(client, monkeypatch):
    """The page made the resumed problem a second time to build its view (a cache hid the cost)."""
    from problemgen.practice.web import engine

    item = client.api("/api/start")
    made = []

    def uncached(generate, kind, seed, difficulty):
        made.append((kind, seed, difficulty))
        return generate(kind, seed, difficulty)

    monkeypatch.setattr(engine, "_cached_generate", uncached)
    assert client.get("/practice").status_code == 200
    assert made == [(item["kind"], item["seed"], item["difficulty"])]
    made.clear()
    assert client.api("/api/current")["item"] == item["item"]
    assert len(made) == 1


def test_a_problem_started_elsewhere_while_one_is_resumed_is_shown_as_itself(client, monkeypatch):
    """The resumed problem is handed to the view it was made for, not to a newer item another process
    (the terminal quiz on the same file) started in between."""
    item = client.api("/api/start")
    resume = ProgressStore.resume_item

    def and_meanwhile(store, item_id, parts, now):
        opened = resume(store, item_id, parts, now)
        with ProgressStore(store.path) as quiz:
            quiz.start_item(quiz.start_session(0, None, NOW), unit=item["unit"], kind=item["kind"],
                            seed=item["seed"] + 1, difficulty=item["difficulty"], variant_id="elsewhere",
                            review=False, target=None, now=NOW)
        return opened

    monkeypatch.setattr(ProgressStore, "resume_item", and_meanwhile)
    shown = client.api("/api/current")
    assert shown["item"] != item["item"] and shown["seed"] == item["seed"] + 1


def test_an_open_problem_this_problemgen_cannot_show_is_left_as_it_is(client, db):
    item = client.api("/api/start")
    with ProgressStore(db) as store:
        store._db.execute("UPDATE items SET difficulty = 99 WHERE id = ?", (item["item"],))
    fresh = client.api("/api/start")
    assert fresh["item"] != item["item"] and fresh["difficulty"] != 99
    with ProgressStore(db) as store:
        assert [(i.difficulty, i.outcome) for i in store.items()] == [(99, None), (fresh["difficulty"], None)]


def test_another_variant_keeps_the_skill_and_never_repeats(client):
    item = client.api("/api/start")
    other = client.api("/api/another", {"item": item["item"]})
    assert other["kind"] == item["kind"] and other["seed"] != item["seed"]


def test_progress_is_kept_across_reloads_and_a_restarted_server(client, db):
    item = client.api("/api/start")
    problem = problem_of(item)
    first = problem.parts[0]
    client.api("/api/answer", {"item": item["item"], "part": first.key, **key_payload(first)})
    again = Client(create_app(db, clock=lambda: NOW).test_client())
    current = again.api("/api/current")
    assert current["item"] == item["item"]
    assert [p["done"] for p in current["parts"]][0] is True


def test_the_terminal_quiz_and_the_web_share_one_store(client, db):
    item = client.api("/api/start")
    answer_all(client, item)
    with ProgressStore(db) as store:
        items = store.items()
    assert items[-1].outcome == "correct"
    rows = summary(load_curriculum(), items, NOW, {k["name"]: tuple(k["difficulties"]) for k in _index()})
    assert rows[0]["correct"] == 1


def _index():
    from problemgen.problems import index

    return index.load()


@pytest.mark.slow
def test_a_student_masters_a_unit_entirely_through_the_web_api(client):
    """Answer what the rules pick, correctly, until the first unit is mastered and the next unlocks."""
    first, second = load_curriculum().units[:2]
    for _ in range(40):
        item = client.api("/api/start")
        assert item["unit"] == first.id
        replies = answer_all(client, item)
        assert all(r["status"] == "correct" for r in replies), replies
        if any(f"Unit mastered: {first.title}" in line for line in replies[-1]["progress"]):
            assert any(f"Unlocked: {second.title}" in line for line in replies[-1]["progress"])
            break
    else:
        pytest.fail("the unit was not mastered after 40 correct items")
    units = {u["id"]: u for u in client.api("/api/progress")["units"]}
    assert units[first.id]["status"] == "mastered" and units[second.id]["unlocked"]
    assert client.api("/api/start")["unit"] == second.id


# ------------------------------------------------------------------------------------------- CLI


def test_serve_binds_localhost_prints_the_url_and_serves_until_stopped(tmp_path):
    import subprocess
    import sys
    import urllib.request

    process = subprocess.Popen(
        [sys.executable, "-m", "problemgen", "serve", "--port", "0", "--no-browser", "--db", str(tmp_path / "p.db")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.status == 200 and "Curriculum" in response.read().decode()
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert (tmp_path / "p.db").exists()


def test_serve_help_has_an_example():
    from click.testing import CliRunner

    from problemgen.cli.serve import serve_command

    result = CliRunner().invoke(serve_command, ["--help"])
    assert result.exit_code == 0 and "Example:" in result.output and "--no-browser" in result.output


def test_the_read_as_preview_shows_the_reading_and_never_the_verdict(client):
    item = client.api("/api/start")
    problem = problem_of(item)
    part = next(p for p in problem.parts if p.type == "matrix")
    right = client.api("/api/preview", {"item": item["item"], "part": part.key, **key_payload(part)})
    cells = [["1/2"] * len(row) for row in (part.value if isinstance(part.value[0], list) else [part.value])]
    other = client.api("/api/preview", {"item": item["item"], "part": part.key, "cells": cells})
    assert right["readable"] and other["readable"] and "<math" in other["html"] and "0.5" in other["html"]
    assert set(right) == set(other) == {"readable", "html"}  # nothing says which one is right
    junk = [["@@"] * len(row) for row in cells]
    garbage = client.api("/api/preview", {"item": item["item"], "part": part.key, "cells": junk})
    assert not garbage["readable"] and garbage["html"]
    with ProgressStore(client.db) as store:
        assert store.answers() == []  # previews are not answers


def test_a_student_stuck_on_a_skill_is_offered_a_worked_example(client):
    from problemgen.practice.rules import WHEEL_SPIN_AFTER

    offers = []
    for _ in range(WHEEL_SPIN_AFTER):
        item = client.api("/api/start")
        part = problem_of(item).parts[0]
        wrong = client.api("/api/answer", {"item": item["item"], "part": part.key, "text": "12345"})
        assert wrong["status"] in ("wrong", "invalid")
        offers = client.api("/api/solution", {"item": item["item"]})["offers"]
    assert [o["offer"] for o in offers][:1] == ["example"], offers
    taken = client.api("/api/offer", {"offer": "example"})
    assert "Worked example" in taken["example"] and "<math" in taken["example"]
    assert taken["item"]["kind"] == item["kind"] and taken["item"]["complete"]
    assert client.post("/api/offer", {"offer": "nonsense"}).status_code == 400
    example = problem_of(taken["item"]).parts[0]
    late = client.post("/api/answer", {"item": taken["item"]["item"], "part": example.key, **key_payload(example)})
    assert late.status_code == 409 and "this problem is closed" in late.get_json()["error"]


def test_the_solution_after_a_wrong_answer_ends_the_item(client):
    item = client.api("/api/start")
    part = problem_of(item).parts[0]
    assert client.api("/api/answer", {"item": item["item"], "part": part.key, "text": "12345"})["status"] == "wrong"
    retry = client.api("/api/answer", {"item": item["item"], "part": part.key, **key_payload(part)})
    assert retry["status"] == "correct"  # the page lets the student correct it (it still counts as wrong)
    client.api("/api/solution", {"item": item["item"]})
    assert client.api("/api/current") is None
    assert client.api("/api/start")["item"] != item["item"]


# ------------------------------------------------------------------------------- closed problems


@pytest.mark.parametrize("wrong_first", [False, True], ids=["undecided", "already wrong"])
def test_a_problem_whose_solution_was_shown_takes_no_answer(client, wrong_first):
    """Answers sent after the solution (from a second tab) were graded and stored: the key came back
    "correct", and wrong ones were counted as a misconception not yet overcome."""
    item = client.api("/api/start")
    part = problem_of(item).parts[0]
    if wrong_first:
        client.api("/api/answer", {"item": item["item"], "part": part.key, "text": "12345"})
    client.api("/api/solution", {"item": item["item"]})
    for payload in (key_payload(part), {"text": "12345"}, {"text": "@@"}):
        reply = client.post("/api/answer", {"item": item["item"], "part": part.key, **payload})
        assert reply.status_code == 409 and "this problem is closed" in reply.get_json()["error"]
    with ProgressStore(client.db) as store:
        assert len(store.answers()) == wrong_first


@pytest.mark.parametrize("how", ["answered", "solution shown"])
def test_a_hint_on_a_closed_problem_is_refused_and_takes_no_credit_back(client, how):
    """The Hint button of a second tab took back the credit of a problem answered right: the unit went
    from 1 toward mastery back to 0."""
    item = client.api("/api/start")
    if how == "answered":
        assert answer_all(client, item)[-1]["item_complete"]
    else:
        client.api("/api/solution", {"item": item["item"]})
    before = client.api("/api/progress")["units"]
    late = client.post("/api/hint", {"item": item["item"]})
    assert late.status_code == 409 and "this problem is closed" in late.get_json()["error"]
    assert client.api("/api/progress")["units"] == before
    assert before[0]["progress"] == (how == "answered")
    with ProgressStore(client.db) as store:
        assert store.items()[-1].hints == 0


def test_a_reset_by_another_process_leaves_the_running_server_able_to_start_problems(client, db):
    """`problemgen progress --reset` deleted the session the server opened at start-up: every start then
    failed with "variant ... was already shown (FOREIGN KEY constraint failed)" until a restart."""
    import io

    from problemgen.practice.quiz import run_progress

    client.api("/api/start")
    assert run_progress(db=str(db), reset=True, stdout=io.StringIO()) == 0
    item = client.api("/api/start")
    assert client.api("/api/current")["item"] == item["item"]
    with ProgressStore(db) as store:
        assert store.session_count() == 1 and [i.id for i in store.items()] == [item["item"]]


def test_a_problem_left_undecided_with_every_part_right_is_credited_not_resumed(client, db):
    """Two servers answering its last two parts at once (before answers were taken one at a time) left
    an item with every part right and no outcome: never credited, and /api/start resumed it forever."""
    item = client.api("/api/start")
    keys = [p.key for p in problem_of(item).parts]
    with ProgressStore(db) as store:
        for key in keys:  # each as if another part were still open
            store.record_answer(item["item"], key, "1", "correct", 1.0, None, NOW, parts=[*keys, "unseen"])
        assert store.items()[-1].outcome is None
    following = client.api("/api/start")
    assert following["item"] != item["item"]
    with ProgressStore(db) as store:
        assert store.items()[0].outcome == "correct"
    assert client.api("/api/progress")["units"][0]["progress"] == 1


def test_the_page_says_progress_toward_mastery_in_the_quizs_words_skills_included(client):
    """The page said "3 of 3 toward mastery" while skills were still unanswered and the unit not mastered;
    it now says, as the terminal does, how many of the unit's skills were answered right."""
    item = client.api("/api/start")
    progress = answer_all(client, item)[-1]["progress"]
    assert any("correct in a row" in line and "skills answered right" in line for line in progress), progress
