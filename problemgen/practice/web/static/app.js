// problemgen web: send answers to the local server and show its feedback. No eval, no network
// beyond this server; every POST carries the page token (see security.py).
"use strict";

const token = () => document.querySelector('meta[name="problemgen-token"]').content;

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Problemgen-Token": token() },
    body: JSON.stringify(body || {}),
    credentials: "same-origin",
  });
  const data = await response.json();
  if (!response.ok) {
    const error = new Error(data && data.error ? data.error : response.statusText);
    error.status = response.status;  // 409: the problem was closed or left elsewhere (another tab, a reset)
    throw error;
  }
  return data;
}

function paragraph(text, cls) {
  const p = document.createElement("p");
  p.textContent = text;
  if (cls) p.className = cls;
  return p;
}

function say(where, text, cls) {
  if (!where) return;
  where.replaceChildren(paragraph(text, cls));
}

// The posted form of one part's answer: grid cells, chosen options, or the typed text.
function payload(fieldset) {
  const kind = fieldset.dataset.widget;
  if (kind === "grid") {
    const rows = Number(fieldset.dataset.rows), cols = Number(fieldset.dataset.cols);
    const cells = Array.from({ length: rows }, () => Array(cols).fill(""));
    fieldset.querySelectorAll("input.cell").forEach((input) => {
      cells[Number(input.dataset.row)][Number(input.dataset.col)] = input.value;
    });
    return { cells };
  }
  if (kind === "choice") {
    return { choice: Array.from(fieldset.querySelectorAll("input:checked")).map((i) => i.value) };
  }
  return { text: fieldset.querySelector("input.text").value };
}

function blank(answer) {
  if (answer.cells) return answer.cells.every((row) => row.every((c) => !c.trim()));
  if (answer.choice) return answer.choice.length === 0;
  return !answer.text.trim();
}

function setupStart() {
  document.querySelectorAll("[data-start]").forEach((button) => {
    button.addEventListener("click", async () => {
      const unit = button.dataset.start || null;
      try {
        await post("/api/start", unit ? { unit } : {});
        window.location.assign("/practice");
      } catch (error) {
        say(document.querySelector(".status"), error.message, "warn");
      }
    });
  });
}

// Wheel-spinning: the rules propose other ways in (worked example, easier, prerequisite).
async function takeOffer(offer, where) {
  const taken = await post("/api/offer", { offer });
  if (taken.example) {
    where.innerHTML = taken.example;  // rendered and escaped by the server
    scrollable();
    where.querySelector("h2").setAttribute("tabindex", "-1");
    where.querySelector("h2").focus();
  } else {
    window.location.assign("/practice");
  }
}

function showOffers(box, offers, where) {
  if (!box || !offers || offers.length === 0) return;
  box.replaceChildren(paragraph("Several tries at this skill without a right answer yet — that happens. Another way in may help:", "warn"));
  offers.forEach((offer) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = offer.text.charAt(0).toUpperCase() + offer.text.slice(1);
    button.addEventListener("click", () => takeOffer(offer.offer, where).catch((e) => say(where, e.message, "warn")));
    box.append(button, " ");
  });
  box.hidden = false;
}

function setupOffers() {
  document.querySelectorAll("[data-offer]").forEach((button) => {
    button.addEventListener("click", () => {
      const where = document.querySelector(".solution-box");
      takeOffer(button.dataset.offer, where).catch((e) => say(where, e.message, "warn"));
    });
  });
}

function setupProblem(article) {
  const item = Number(article.dataset.item);
  const report = article.querySelector(".report");
  const finish = () => {
    article.querySelectorAll(".tools button").forEach((b) => { b.hidden = !b.classList.contains("next"); });
    article.querySelectorAll("fieldset.part input, fieldset.part button").forEach((el) => { el.disabled = true; });
    const next = article.querySelector("button.next");
    next.hidden = false;
    next.focus();
  };
  // A failed request: the message in the report area; a conflict (the problem was finished, shown or left
  // in another tab, or the progress reset) also ends this page's problem and offers the next one.
  const failed = (error, where) => {
    say(where || report, error.message, "warn");
    if (error.status === 409) {
      if (where && where !== report) say(report, error.message, "warn");
      finish();
    }
  };

  article.querySelectorAll("fieldset.part").forEach((fieldset) => {
    const part = fieldset.dataset.part;
    const preview = fieldset.querySelector(".preview");
    const feedback = fieldset.querySelector(".feedback");
    const submit = fieldset.querySelector("button.submit");
    let timer = null;

    const showPreview = async () => {
      const answer = payload(fieldset);
      if (blank(answer)) { preview.querySelector(".preview-value").replaceChildren(); return; }
      try {
        const read = await post("/api/preview", { item, part, ...answer });
        preview.classList.toggle("unreadable", !read.readable);
        preview.querySelector(".preview-value").innerHTML = read.html;  // escaped by the server
      } catch (error) { /* the preview is a convenience: submitting reports any problem */ }
    };
    fieldset.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(showPreview, 150); });

    // Disabling the focused Check button drops focus to the page: give it back where the student was.
    let returnTo = null;
    const refocus = () => { if (returnTo && document.activeElement === document.body) returnTo.focus(); };
    const check = async () => {
      if (submit.disabled) return;
      returnTo = document.activeElement;
      submit.disabled = true;
      try {
        const result = await post("/api/answer", { item, part, ...payload(fieldset) });
        feedback.replaceChildren();
        if (result.read_as) feedback.append(paragraph("Read as: " + result.read_as));
        if (result.status === "correct") {
          feedback.append(paragraph("Correct.", "good"));
          fieldset.classList.add("done");
          fieldset.querySelectorAll("input").forEach((el) => { el.disabled = true; });
          const next = article.querySelector("fieldset.part:not(.done) input");
          if (next) next.focus();
        } else if (result.status === "invalid") {
          feedback.append(paragraph("I could not read that: " + result.feedback, "warn"));
          submit.disabled = false;
          refocus();
        } else {
          feedback.append(paragraph("Wrong.", "bad"));
          if (result.mistake_title) {
            const box = document.createElement("div");
            box.className = "mistake";
            box.append(paragraph("Known mistake: " + result.mistake_title + "."));
            if (result.mistake_hint) box.append(paragraph("Hint: " + result.mistake_hint));
            feedback.append(box);
          }
          if (result.feedback) feedback.append(paragraph(result.feedback));
          feedback.append(paragraph("Try again, or ask for a hint or the solution."));
          submit.disabled = false;
          refocus();
        }
        if (result.item_complete) {
          report.replaceChildren(...result.progress.map((line) => paragraph(line)));
          finish();
          showOffers(article.querySelector(".offers"), result.offers, article.querySelector(".solution-box"));
        }
      } catch (error) {
        submit.disabled = false;
        failed(error, feedback);
        if (error.status !== 409) submit.focus();
      }
    };
    submit.addEventListener("click", check);
    fieldset.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && event.target.matches("input.cell, input.text, input[type=radio], input[type=checkbox]")) {
        event.preventDefault();
        check();
      }
    });
  });

  const tools = article.querySelector(".tools");
  tools.querySelector(".hint").addEventListener("click", async () => {
    try {
      const hint = await post("/api/hint", { item });
      article.querySelector(".hints").append(paragraph("Hint " + hint.level + ": " + hint.text));
    } catch (error) { failed(error); }
  });
  tools.querySelector(".solution").addEventListener("click", async () => {
    try {
      const solution = await post("/api/solution", { item });
      article.querySelector(".solution-box").innerHTML = solution.html;  // rendered and escaped by the server
      scrollable();
      finish();
      showOffers(article.querySelector(".offers"), solution.offers, article.querySelector(".solution-box"));
    } catch (error) { failed(error); }
  });
  const leave = (how) => async () => {
    try {
      await post("/api/" + how, { item });
      window.location.reload();
    } catch (error) { failed(error); }
  };
  tools.querySelector(".another").addEventListener("click", leave("another"));
  tools.querySelector(".skip-item").addEventListener("click", leave("skip"));
  tools.querySelector(".next").addEventListener("click", async () => {
    try {
      await post("/api/start", {});
      window.location.reload();
    } catch (error) { failed(error); }
  });
}

// Maths or a grid wider than the screen scrolls sideways; a keyboard can scroll only what it can focus, so each
// region that overflows becomes a focusable, named stop (and stops being one when it fits again).
function scrollable() {
  document.querySelectorAll('.prompt, .worked, math[display="block"], .gridwrap').forEach((el) => {
    if (el.scrollWidth > el.clientWidth + 1) {
      el.tabIndex = 0;
      if (!el.hasAttribute("aria-label")) el.setAttribute("aria-label", "wide content: scroll sideways");
    } else if (el.tabIndex === 0 && el.getAttribute("aria-label") === "wide content: scroll sideways") {
      el.removeAttribute("tabindex");
      el.removeAttribute("aria-label");
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  scrollable();
  window.addEventListener("resize", scrollable);
  setupStart();
  setupOffers();
  const article = document.querySelector("article.problem[data-item]");
  if (article) setupProblem(article);
  document.documentElement.dataset.ready = "true";
});
