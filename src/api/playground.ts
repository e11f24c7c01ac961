/**
 * The playground page served at GET /: one self-contained HTML file (inline CSS and JS, no fonts,
 * images or scripts from anywhere else; the CSP header below forbids them too). The key is typed
 * into the page and sent with each request from the browser; the server never stores it.
 */
export const PLAYGROUND_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const PLAYGROUND_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc playground</title>
<style>
  :root { --fg: #1b1f24; --muted: #5b6570; --line: #d8dde3; --accent: #2563eb; --bad: #b42318; --bg: #f6f7f9; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
  header { padding: 14px 24px; background: #fff; border-bottom: 1px solid var(--line); display: flex; gap: 16px; align-items: baseline; }
  header h1 { font-size: 18px; margin: 0; }
  header span { color: var(--muted); }
  main { display: grid; grid-template-columns: minmax(340px, 1fr) minmax(340px, 1fr); gap: 20px; padding: 20px 24px; }
  section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; }
  h2 { font-size: 15px; margin: 0 0 10px; }
  label { display: block; font-weight: 600; margin: 10px 0 4px; }
  input, textarea, select { width: 100%; font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
  textarea { resize: vertical; }
  .row { display: flex; gap: 8px; align-items: center; }
  .row > * { flex: 1; }
  button { font: inherit; padding: 6px 12px; border-radius: 6px; border: 1px solid var(--line); background: #fff; cursor: pointer; }
  button.primary { background: var(--accent); color: #fff; border-color: var(--accent); font-weight: 600; }
  .question { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; margin: 10px 0; }
  .question .head { display: flex; gap: 8px; align-items: center; }
  .question .kind { font-weight: 700; min-width: 52px; }
  .question .remove { flex: 0; }
  .hint { color: var(--muted); font-size: 12px; }
  .answer { border-top: 1px solid var(--line); padding: 10px 0; }
  .answer:first-child { border-top: 0; }
  .answer h3 { font-size: 14px; margin: 0 0 6px; }
  .pick { color: var(--accent); }
  .bar { display: grid; grid-template-columns: 140px 1fr 64px; gap: 8px; align-items: center; margin: 3px 0; }
  .bar .label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  .bar .track { height: 14px; background: #eef1f4; border-radius: 3px; overflow: hidden; }
  .bar .fill { height: 100%; background: #9db4e8; }
  .bar.best .fill { background: var(--accent); }
  .bar .bar-value { text-align: right; font-variant-numeric: tabular-nums; }
  .meta { color: var(--muted); font-size: 12px; }
  .abstained { color: var(--bad); font-weight: 600; }
  #error { color: var(--bad); white-space: pre-wrap; }
  pre { background: #f3f4f6; padding: 8px; border-radius: 6px; white-space: pre-wrap; word-break: break-all; font-size: 12px; }
</style>
</head>
<body>
<header><h1>svc playground</h1><span>typed questions in, calibrated numbers out; the key stays in this page</span></header>
<main>
<section>
  <h2>Request</h2>
  <label for="key">API key</label>
  <input id="key" type="password" autocomplete="off" placeholder="svc_xxxxxxxx_...">
  <div class="row">
    <div><label for="endpoint">Endpoint</label>
      <select id="endpoint"><option value="/v1/systemone">POST /v1/systemone</option><option value="/v1/decide">POST /v1/decide (with abstention)</option></select></div>
    <div><label for="model">Model</label><input id="model" value="svc-latest"></div>
    <div id="min-confidence-box"><label for="min-confidence">min_confidence</label><input id="min-confidence" type="number" min="0" max="1" step="0.05" placeholder="model default"></div>
  </div>
  <label for="state">State</label>
  <textarea id="state" rows="4" placeholder="The text (or JSON) to decide about"></textarea>
  <label>Questions</label>
  <div id="questions"></div>
  <div class="row">
    <button id="add-noul" type="button">+ yes/no (noul)</button>
    <button id="add-choice" type="button">+ choice</button>
    <button id="add-score" type="button">+ score</button>
  </div>
  <p class="row"><button id="send" class="primary" type="button">Send</button><button id="curl-button" type="button">Copy as curl</button></p>
  <pre id="curl" hidden></pre>
</section>
<section>
  <h2>Answers</h2>
  <div id="error" role="alert"></div>
  <div id="answers"><p class="hint">Add a question and send.</p></div>
  <p id="meta" class="meta"></p>
</section>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
let counter = 0;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function addQuestion(kind) {
  counter++;
  const box = el("div", { class: "question", "data-kind": kind });
  const remove = el("button", { class: "remove", type: "button", title: "remove" }, "x");
  remove.onclick = () => box.remove();
  box.append(el("div", { class: "head" }, el("span", { class: "kind" }, kind), el("input", { class: "q-key", value: kind + counter, "aria-label": "question key" }), remove));
  box.append(el("input", { class: "q-text", placeholder: kind === "noul" ? "A yes/no question" : kind === "choice" ? "Which option fits?" : "Where on the scale?", "aria-label": "question" }));
  if (kind === "noul") {
    box.append(el("div", { class: "row" }, el("input", { class: "q-yes", placeholder: "yes means... (optional)" }), el("input", { class: "q-no", placeholder: "no means... (optional)" })));
  } else {
    box.append(el("textarea", { class: "q-options", rows: "3", placeholder: kind === "choice" ? "one option a line: key: description" : "one level a line, lowest first" }));
    box.append(el("div", { class: "hint" }, kind === "choice" ? "2 to 255 options. Descriptions are optional. The built-in model reads them; see the README for when they help." : "2 to 10 levels"));
  }
  $("questions").append(box);
  return box;
}

function lines(text) {
  return text.split("\\n").map((l) => l.trim()).filter((l) => l.length > 0);
}

function buildRequest() {
  const decide = $("endpoint").value === "/v1/decide";
  const questions = {};
  for (const box of document.querySelectorAll(".question")) {
    const kind = box.dataset.kind;
    const key = box.querySelector(".q-key").value.trim();
    const text = box.querySelector(".q-text").value;
    let q;
    if (kind === "noul") {
      const yes = box.querySelector(".q-yes").value, no = box.querySelector(".q-no").value;
      if (decide) {
        q = { type: "binary", question: text };
        if (yes) q.yes = yes;
        if (no) q.no = no;
      } else {
        q = { type: "noul", instructions: text };
        if (yes || no) q.criteria = Object.assign({}, yes ? { true: yes } : {}, no ? { false: no } : {});
      }
    } else if (kind === "choice") {
      const options = {};
      for (const l of lines(box.querySelector(".q-options").value)) {
        const at = l.indexOf(":");
        if (at > 0) options[l.slice(0, at).trim()] = l.slice(at + 1).trim() || null;
        else options[l] = null;
      }
      q = decide ? { type: "choice", question: text, options } : { type: "choice", instructions: text, criteria: options };
    } else {
      const levels = lines(box.querySelector(".q-options").value);
      q = decide ? { type: "scale", question: text, levels } : { type: "score", instructions: text, criteria: levels };
    }
    questions[key] = q;
  }
  const body = { model: $("model").value.trim(), state: $("state").value, questions };
  const min = $("min-confidence").value;
  if (decide && min !== "") body.min_confidence = Number(min);
  return { path: $("endpoint").value, body };
}

function curlOf(req) {
  const json = JSON.stringify(req.body, null, 2).replace(/'/g, "'\\\\''");
  return "curl -s " + location.origin + req.path + " \\\\\\n  -H \\"Authorization: Bearer $KEY\\" -H \\"Content-Type: application/json\\" \\\\\\n  -d '" + json + "'";
}

function fmt(x) {
  return typeof x === "number" ? x.toFixed(3) : String(x);
}

function bars(probabilities, best) {
  const box = el("div", { class: "bars" });
  for (const [name, p] of Object.entries(probabilities)) {
    const row = el("div", { class: "bar" + (name === best ? " best" : ""), "data-option": name });
    const fill = el("div", { class: "fill" });
    fill.style.width = (100 * p).toFixed(1) + "%";
    row.append(el("span", { class: "label", title: name }, name), el("div", { class: "track" }, fill), el("span", { class: "bar-value" }, fmt(p)));
    box.append(row);
  }
  return box;
}

function renderAnswer(key, a, legend) {
  const card = el("div", { class: "answer", "data-key": key });
  const title = el("h3", {}, key + " ");
  let probabilities, best;
  if (a.type === "noul" || a.type === "binary") {
    const p = a.type === "noul" ? a.noul : a.probability;
    probabilities = { true: p, false: 1 - p };
    best = a.type === "noul" ? (p >= 0.5 ? "true" : "false") : a.answer === null ? null : String(a.answer);
    title.append(el("span", { class: "pick" }, a.type === "noul" ? "P(true) = " + fmt(p) : a.answer === null ? "no answer" : String(a.answer)));
  } else if (a.type === "choice") {
    probabilities = a.probabilities;
    best = a.type === "choice" && "choice" in a ? a.choice : a.answer;
    title.append(el("span", { class: "pick" }, best === null ? "no answer" : best));
  } else {
    probabilities = {};
    for (const [i, p] of Object.entries(a.probabilities)) {
      const name = legend && legend[i] !== undefined ? i + " " + (typeof legend[i] === "string" ? legend[i] : JSON.stringify(legend[i])) : i;
      probabilities[name] = p;
    }
    const value = "score" in a ? a.score : a.answer;
    const level = "score" in a ? Math.round(a.score) : a.level;
    best = level === null ? null : Object.keys(probabilities)[level];
    title.append(el("span", { class: "pick" }, value === null ? "no answer" : "level " + fmt(value)));
  }
  card.append(title, bars(probabilities, best));
  const meta = el("div", { class: "meta" });
  if ("confidence" in a) meta.append(el("span", { class: "confidence" }, "confidence " + fmt(a.confidence)));
  if ("abstained" in a) {
    meta.append(" · ", a.abstained ? el("span", { class: "abstained" }, "abstained (under " + fmt(a.min_confidence) + ")") : el("span", { class: "answered" }, "answered (min_confidence " + fmt(a.min_confidence) + ")"));
  }
  if (a.state_truncated) meta.append(" · state cut to fit");
  card.append(meta);
  return card;
}

async function send() {
  const req = buildRequest();
  $("error").textContent = "";
  $("answers").textContent = "";
  $("meta").textContent = "sending...";
  let res, body;
  try {
    res = await fetch(req.path, { method: "POST", headers: { authorization: "Bearer " + $("key").value.trim(), "content-type": "application/json" }, body: JSON.stringify(req.body) });
    body = await res.json();
  } catch (err) {
    $("meta").textContent = "";
    $("error").textContent = "The request failed: " + err.message;
    return;
  }
  const id = res.headers.get("x-request-id");
  if (!res.ok) {
    $("meta").textContent = "request " + id;
    const problems = (body.detail || []).map((d) => d.loc.slice(1).join(".") + ": " + d.msg).join("\\n");
    $("error").textContent = res.status + " " + body.error.type + ": " + body.error.message + (body.detail && body.detail.length > 1 ? "\\n" + problems : "");
    return;
  }
  const legends = {};
  for (const [k, q] of Object.entries(req.body.questions)) {
    if (q.type === "score") legends[k] = Object.assign({}, q.criteria);
    else if (q.type === "scale") legends[k] = Object.assign({}, q.levels);
  }
  for (const [key, a] of Object.entries(body.answers)) $("answers").append(renderAnswer(key, a, a.legend || legends[key]));
  $("meta").textContent = body.model + " · " + body.usage.input_tokens + " input tokens · request " + id + (res.headers.get("x-state-truncated") === "true" ? " · the state was cut to fit" : "");
}

function copyCurl() {
  const text = curlOf(buildRequest());
  $("curl").textContent = text;
  $("curl").hidden = false;
  if (navigator.clipboard) navigator.clipboard.writeText(text).then(() => { $("curl-button").textContent = "Copied"; }, () => {});
}

$("add-noul").onclick = () => addQuestion("noul");
$("add-choice").onclick = () => addQuestion("choice");
$("add-score").onclick = () => addQuestion("score");
$("send").onclick = () => void send();
$("curl-button").onclick = copyCurl;
$("endpoint").onchange = () => { $("min-confidence-box").hidden = $("endpoint").value !== "/v1/decide"; };
$("endpoint").onchange();
</script>
</body>
</html>
`;
