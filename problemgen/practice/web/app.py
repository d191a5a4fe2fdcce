"""The Flask application: pages (curriculum, problem, progress, bank preview) and the JSON practice API.

Routes stay thin: each takes the app's progress store (requests come one at a time, see ``dispatch``), calls
``engine.Practice`` (the shared practice rules) or ``views`` (page data), and renders a template from
``templates/web/`` or returns JSON.
Files are served only from the package's own ``static/`` directory (Flask's ``safe_join`` refuses any
path that leaves it); banks only by the names of the shipped banks; the database only at ``db_path``.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable

from flask import Flask, abort, current_app, jsonify, render_template, request
from werkzeug.exceptions import HTTPException, InternalServerError

from problemgen.documents.banks import load_bank, shipped_banks
from problemgen.documents.worksheet import build_variant
from problemgen.model import registry
from problemgen.errors import WriteFailed
from problemgen.model.core import ProblemgenError
from problemgen.practice.progress import ItemConflict, ProgressStore
from problemgen.practice.services import clock_from_env, default_services
from problemgen.practice.rules import load_curriculum, summary
from problemgen.practice.web import security
from problemgen.practice.web.dispatch import one_at_a_time
from problemgen.practice.web.engine import ItemView, Practice, ServerSession, find_part
from problemgen.practice.web.inputs import answer_text, empty_cells
from problemgen.practice.web.preview import read_as
from problemgen.practice.web.views import (
    key_view,
    mistakes_over_time,
    part_view,
    problem_html,
    skill_rows,
)
from problemgen.resources import templates_dir

STATIC_DIR = Path(__file__).with_name("static")
MAX_REQUEST_BYTES = 64 * 1024
_SMALL_INT = re.compile(r"[0-9]{1,9}")


def create_app(db_path: str | Path, *, clock: Callable[[], datetime] | None = None, services=None,
               curriculum=None, hosts: Iterable[str] = ()) -> Flask:
    """The app over the progress file ``db_path`` (created on first use, like the quiz does).

    ``hosts``: names besides loopback and the bound address that requests may be made to (``--host``)."""
    app = Flask(__name__, static_folder=str(STATIC_DIR), static_url_path="/static",
                template_folder=str(templates_dir() / "web"))
    app.jinja_env.autoescape = True  # templates are *.html.j2: Flask would not guess it from the name
    app.config.update(MAX_CONTENT_LENGTH=MAX_REQUEST_BYTES, SEND_FILE_MAX_AGE_DEFAULT=3600)
    app.wsgi_app = one_at_a_time(app.wsgi_app, MAX_REQUEST_BYTES)
    state = app.extensions["problemgen"] = {
        "db": Path(db_path), "clock": clock or clock_from_env(), "token": security.new_token(),
        "services": services or default_services(), "curriculum": curriculum or load_curriculum(),
        "hosts": frozenset(host.lower() for host in hosts),
    }
    # one store for the app's life: closing SQLite's last connection syncs the journal to disk, a cost
    # per request; requests use it one at a time (dispatch.one_at_a_time), from whichever thread
    store = state["store"] = ProgressStore(state["db"], any_thread=True)
    state["session"] = ServerSession().open(store, state["clock"])
    _register(app)
    return app


# ------------------------------------------------------------------------------------ plumbing


def _state() -> dict[str, Any]:
    return current_app.extensions["problemgen"]


def _practice() -> Practice:
    state = _state()
    return Practice(state["store"], state["curriculum"], state["services"], state["clock"], state["session"])


def _bound() -> tuple[str, int]:
    """The address and port the server listens on: a WSGI server fills ``SERVER_NAME`` and
    ``SERVER_PORT`` from its own socket (werkzeug from ``server_address``), never from the request."""
    return request.environ["SERVER_NAME"], int(request.environ["SERVER_PORT"])


def _is_api() -> bool:
    return request.path.startswith("/api/")


def _page(template: str, **context: Any) -> str:
    return render_template(template, token=_state()["token"], **context)


def _payload() -> dict[str, Any]:
    """The JSON object a POST carries.

    Parsed here rather than by ``request.get_json(silent=True)``, which let a deeply nested body escape as
    a RecursionError (a 500). ``get_data`` answers 413 for a body over the size cap (``dispatch`` gives
    a chunked body its length, so that holds for it too)."""
    if not request.is_json:
        raise ProblemgenError("expected a JSON object (Content-Type: application/json)")
    body = request.get_data(cache=True)
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested deeper than the parser goes
        raise ProblemgenError("the request body is not readable JSON") from None
    if not isinstance(data, dict):
        raise ProblemgenError("expected a JSON object")
    return data


def _item_id(data: dict) -> int:
    item = data.get("item")
    if not isinstance(item, int) or isinstance(item, bool):
        raise ProblemgenError("item must be the problem's number")
    return item


def item_json(view: ItemView) -> dict[str, Any]:
    """What a client needs to show and answer an item (the scripted API uses the same)."""
    describe = _state()["services"].describe
    return {"item": view.id, "unit": view.record.unit, "kind": view.problem.kind, "seed": view.problem.seed,
            "difficulty": view.problem.difficulty, "title": view.problem.title, "reason": view.reason,
            "hints": view.record.hints, "failed": view.failed, "complete": view.complete,
            "parts": [{"key": p.key, "type": p.type, "done": p.key in view.done_parts,
                       "widget": part_view(p, describe)["widget"].kind} for p in view.problem.parts]}


# -------------------------------------------------------------------------------------- routes


def _register(app: Flask) -> None:
    @app.before_request
    def refuse_other_hosts_and_sites():
        why = (security.host_refusal(request.headers.get("Host"), _bound(), _state()["hosts"])
               or security.refusal(request.method, request.headers, _state()["token"]))
        if why:
            return jsonify(error=why), 403
        return None

    @app.after_request
    def headers(response):
        security.harden(response)
        return response

    @app.errorhandler(ProblemgenError)
    def bad_input(exc):
        return jsonify(error=str(exc)), 400

    @app.errorhandler(WriteFailed)
    def not_saved(exc):
        """The progress store could not be written (a full disk): the page says so in the store's one line,
        and 507 tells it apart from a bad request; what was saved before is kept."""
        return jsonify(error=str(exc)), 507

    @app.errorhandler(ItemConflict)
    def changed_elsewhere(exc):
        return jsonify(error=str(exc)), 409

    @app.errorhandler(413)
    def too_large(_exc):
        return jsonify(error="request too large"), 413

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        """A refusal by Flask itself (unknown URL, wrong method): on the API one line of JSON, which the
        page script reads as it reads our own errors; a page keeps Flask's HTML answer."""
        if not _is_api():
            return exc
        return jsonify(error=exc.description), exc.code

    @app.errorhandler(Exception)
    def unexpected(exc: Exception):
        """A bug: the traceback goes to the server's log only, never to the client."""
        current_app.logger.error("%s %s failed", request.method, request.path, exc_info=exc)
        if _is_api():
            return jsonify(error="internal error; the terminal running problemgen serve shows the details"), 500
        return InternalServerError()

    _pages(app)
    _api(app)


def _pages(app: Flask) -> None:
    @app.get("/")
    def curriculum():
        practice = _practice()
        rows = summary(practice.curriculum, practice.store.items(), practice.clock(), practice.services.available)
        for row in rows:
            row["skills"] = skill_rows(row["skills"], dict(practice.services.summary))
        return _page("curriculum.html.j2", units=rows, current=practice.current())

    @app.get("/practice")
    def practice_page():
        practice = _practice()
        view = practice.current()
        context = _problem_context(practice, view) if view else {"view": None, "offers": practice.offers()}
        return _page("practice.html.j2", **context)

    @app.get("/progress")
    def progress_page():
        practice = _practice()
        items = practice.store.items()
        rows = summary(practice.curriculum, items, practice.clock(), practice.services.available)
        skills = skill_rows([s for row in rows for s in row["skills"]], dict(practice.services.summary))
        return _page("progress.html.j2", skills=[s for s in skills if s["shown"]],
                     mistakes=mistakes_over_time(practice.store.answers(), items), db=str(_state()["db"]))

    @app.get("/bank/<name>")
    def bank_page(name: str):
        return _page("bank.html.j2", **_bank_context(name, request.args.get("seed", "")))

    @app.get("/bank/<name>/<problem_id>")
    def bank_problem_page(name: str, problem_id: str):
        """One problem of the worksheet, redrawn: ``?variant=K`` is its K-th other variant."""
        context = _bank_context(name, request.args.get("seed", ""), problem_id,
                                _small_int(request.args.get("variant", "")))
        return _page("bank.html.j2", **context)


def _problem_context(practice: Practice, view: ItemView) -> dict[str, Any]:
    """The problem page: the prompt, each part (done or not) and the hints already given, which a reload
    shows again where the Hint button puts them."""
    describe = _state()["services"].describe
    unit = _state()["curriculum"].unit(view.record.unit)
    return {"view": view, "unit": unit, "prompt": problem_html(view.problem, "prompt"),
            "parts": [dict(part_view(p, describe), done=p.key in view.done_parts) for p in view.problem.parts],
            "hints": practice.hints_given(view)}


def _solution_html(view: ItemView, prompt: bool = False) -> str:
    """The worked solution and keys of an item (with its prompt first for a worked example)."""
    return render_template("_solution.html.j2", solution=problem_html(view.problem, "solution"),
                           keys=[key_view(p) for p in view.problem.parts], title=view.problem.title,
                           prompt=problem_html(view.problem, "prompt") if prompt else None)


def _small_int(text: str) -> int | None:
    """``text`` as a number of up to 9 ASCII digits, else None (the default). Not ``str.isdigit``:
    it accepts digits such as ``²`` that ``int`` refuses, which made ``?seed=%C2%B2`` a server error."""
    return int(text) if _SMALL_INT.fullmatch(text) else None


def _bank_context(name: str, seed_text: str, problem_id: str | None = None,
                  redraw: int | None = None) -> dict[str, Any]:
    """The problems of a shipped bank at one worksheet seed (``?seed=`` picks another worksheet), or
    only ``problem_id``, redrawn ``redraw`` steps from its worksheet seed (same kind, difficulty and
    overrides)."""
    shipped = {p.stem: p for p in shipped_banks()}
    if name not in shipped:
        abort(404)
    bank = load_bank(shipped[name])
    seed = _small_int(seed_text)
    seed = bank.seed if seed is None else seed
    placed = build_variant(bank, seed).problems
    if problem_id is not None:
        placed = [sp for sp in placed if sp.id == problem_id] or abort(404)
    problems = [_bank_problem(sp, redraw) for sp in placed]
    return {"bank": bank, "name": name, "seed": seed, "next_seed": seed + 1, "problems": problems,
            "single": problem_id is not None, "next_redraw": (redraw or 0) + 1}


def _bank_problem(placed, redraw: int | None) -> dict[str, Any]:
    problem = placed.problem
    if redraw:
        redrawn = registry.generate(problem.kind, problem.seed + redraw, problem.difficulty, **problem.overrides)
        problem = replace(redrawn, title=problem.title)  # the bank may give the problem its own title
    describe = _state()["services"].describe
    return {"id": placed.id, "points": placed.points, "problem": problem,
            "prompt": problem_html(problem, "prompt"), "solution": problem_html(problem, "solution"),
            "parts": [part_view(p, describe) for p in problem.parts], "keys": [key_view(p) for p in problem.parts]}


def _api(app: Flask) -> None:
    @app.post("/api/start")
    def start():
        unit = _payload().get("unit")
        if unit is not None and not isinstance(unit, str):
            raise ProblemgenError("unit must be a unit id")
        return jsonify(item_json(_practice().start(unit, resume=unit is None)))

    @app.get("/api/current")
    def current():
        view = _practice().current()
        return jsonify(item_json(view) if view else None)

    @app.post("/api/answer")
    def answer():
        data = _payload()
        practice = _practice()
        view = practice.item(_item_id(data))
        part = _part(view, data)
        blank = empty_cells(data.get("cells"))
        if blank:
            row, col = blank[0]
            return jsonify(status="invalid", feedback=f"row {row}, column {col} is empty", mistake=None,
                           mistake_title="", mistake_hint="", item_complete=False, progress=[])
        return jsonify(practice.answer(view.id, part.key, answer_text(part, data)))

    @app.post("/api/preview")
    def preview():
        data = _payload()
        view = _practice().item(_item_id(data))
        part = _part(view, data)
        if empty_cells(data.get("cells")):
            return jsonify(readable=False, html="")
        return jsonify(read_as(part, answer_text(part, data)))

    @app.post("/api/hint")
    def hint():
        return jsonify(_practice().hint(_item_id(_payload())))

    @app.post("/api/solution")
    def solution():
        practice = _practice()
        view = practice.reveal(_item_id(_payload()))
        return jsonify(html=_solution_html(view), offers=practice.offers())

    @app.post("/api/offer")
    def offer():
        """Take one of the wheel-spinning offers; a worked example comes back with its solution."""
        name = _payload().get("offer")
        if not isinstance(name, str):
            raise ProblemgenError("offer must be one of the offers")
        view = _practice().take_offer(name)
        example = _solution_html(view, prompt=True) if view.complete else None
        return jsonify(item=item_json(view), example=example)

    @app.post("/api/skip")
    def skip():
        return jsonify(item_json(_practice().leave(_item_id(_payload()), "skip")))

    @app.post("/api/another")
    def another():
        return jsonify(item_json(_practice().leave(_item_id(_payload()), "another")))

    @app.get("/api/progress")
    def progress():
        practice = _practice()
        return jsonify(units=summary(practice.curriculum, practice.store.items(), practice.clock(),
                                     practice.services.available))


def _part(view: ItemView, data: dict):
    key = data.get("part")
    if not isinstance(key, str):
        raise ProblemgenError("part must be a part key")
    return find_part(view.problem, key)
