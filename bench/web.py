"""Web front end latency: page load to interactive, and answer round trips (median and p95).

Targets (issue 19): a page is interactive within 300 ms of navigation; an answer's round trip (POST
to feedback JSON) has p95 at most 100 ms.

The real server runs as `python -m problemgen serve --port 0 --no-browser` on a fresh progress file.

* Round trips over HTTP from this process (a new connection per request, as the stdlib client does):
  baseline GET of a static file from the same server, then POST /api/preview and POST /api/answer.
  Answers alternate: a wrong grid (every cell 0), then the key computed by regenerating the problem
  from the item the server returns, so half of the feedback is "wrong", half "correct"; after an
  item's last part the next item is started (not timed).
* Page load in headless Chromium (Playwright, Debian's /usr/bin/chromium; skipped when absent): the
  browser's own Navigation Timing, from navigation start to the end of DOMContentLoaded (where the
  page's script wires the inputs and marks the page ready), for the problem page and the curriculum,
  against the baseline of the same navigation to a static file of the same server.

Usage: python3 bench/web.py [--answers 60] [--loads 15]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _common import ROOT, machine_line, median, percentile, table, verdict

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def start_server(db: Path) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, "-m", "problemgen", "serve", "--port", "0", "--no-browser",
                                "--db", str(db)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True)
    url = re.search(r"http://127\.0\.0\.1:\d+", process.stdout.readline()).group(0)
    return process, url


class Api:
    def __init__(self, url: str) -> None:
        self.url = url
        page = urllib.request.urlopen(url + "/").read().decode()
        self.token = re.search(r'name="problemgen-token" content="([^"]+)"', page).group(1)

    def post(self, path: str, body: dict) -> tuple[float, dict]:
        request = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json", "X-Problemgen-Token": self.token})
        start = time.perf_counter()
        with urllib.request.urlopen(request) as response:
            data = json.loads(response.read())
        return time.perf_counter() - start, data

    def get(self, path: str) -> float:
        start = time.perf_counter()
        with urllib.request.urlopen(self.url + path) as response:
            response.read()
        return time.perf_counter() - start


def key_payload(part) -> dict:
    from problemgen.practice.web.inputs import widget_for
    from problemgen.sheets.answersheet import key_value, toml_value

    widget, value = widget_for(part), key_value(part)
    if widget.kind == "grid":
        rows = [value] if widget.vector else value
        return {"cells": [[toml_value(x).strip('"') for x in row] for row in rows]}
    if widget.kind == "choice":
        return {"choice": value if isinstance(value, list) else [value]}
    return {"text": value if isinstance(value, str) else toml_value(value)}


def wrong_payload(part) -> dict:
    from problemgen.practice.web.inputs import widget_for

    widget = widget_for(part)
    if widget.kind == "grid":
        return {"cells": [["0"] * widget.cols for _ in range(widget.rows)]}
    return {"text": "0"}


def round_trips(api: Api, answers: int) -> dict[str, list[float]]:
    from problemgen.model import registry

    times: dict[str, list[float]] = {"static": [], "preview": [], "answer": []}
    _, item = api.post("/api/start", {})
    while len(times["answer"]) < answers:
        problem = registry.generate(item["kind"], item["seed"], item["difficulty"])
        for part in problem.parts:
            times["static"].append(api.get("/static/app.css"))
            elapsed, _ = api.post("/api/preview", {"item": item["item"], "part": part.key, **key_payload(part)})
            times["preview"].append(elapsed)
            for payload in (wrong_payload(part), key_payload(part)):
                elapsed, reply = api.post("/api/answer", {"item": item["item"], "part": part.key, **payload})
                times["answer"].append(elapsed)
        _, item = api.post("/api/start", {})
    return times


def page_loads(url: str, loads: int) -> dict[str, list[float]] | None:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        return None
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {"static file": [], "problem page": [], "curriculum": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(url + "/practice")  # warm the server's caches once (the first variant's generation)
        for _ in range(loads):
            for name, path in (("static file", "/static/app.css"), ("problem page", "/practice"), ("curriculum", "/")):
                page.goto(url + path)
                if path != "/static/app.css":
                    page.wait_for_selector("html[data-ready]", state="attached")
                timing = page.evaluate("() => performance.getEntriesByType('navigation')[0].toJSON()")
                # interactive = DOMContentLoaded handled (our script marks data-ready there); a file: load
                times[name].append(timing["domContentLoadedEventEnd"] / 1000)
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--answers", type=int, default=60)
    parser.add_argument("--loads", type=int, default=15)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start_server(Path(tmp) / "progress.sqlite3")
        try:
            api = Api(url)
            trips = round_trips(api, args.answers)
            loads = page_loads(url, args.loads)
        finally:
            process.terminate()
            process.wait()
    rows = [(f"round trip: {name}", f"{median(t) * 1000:.1f}", f"{percentile(t, 95) * 1000:.1f}",
             f"{percentile(t, 95) / percentile(trips['static'], 95):.1f}x", len(t)) for name, t in trips.items()]
    print(table(["request", "median ms", "p95 ms", "p95 vs static", "n"], rows,
                "Round trips over HTTP (new connection each)"))
    print(f"answer p95 <= 100 ms: {verdict(percentile(trips['answer'], 95) <= 0.100)}")
    if loads is None:
        print("page load: skipped (no Chromium)")
        return
    rows = [(name, f"{median(t) * 1000:.1f}", f"{percentile(t, 95) * 1000:.1f}",
             f"{median(t) / median(loads['static file']):.1f}x", len(t)) for name, t in loads.items()]
    print(table(["navigation", "median ms", "p95 ms", "median vs static", "n"], rows,
                "Page load to interactive in headless Chromium"))
    worst = max(percentile(loads["problem page"], 95), percentile(loads["curriculum"], 95))
    print(f"page interactive <= 300 ms (p95): {verdict(worst <= 0.300)}")


if __name__ == "__main__":
    main()
