"use strict";
// The view page: every example of a run or sweep, filterable and sortable, the state kept in the URL fragment.
// Documents arrive gzip-compressed and base64-encoded, each in a <script type="text/plain"> element of its own,
// and are inflated only when an example is opened.

const DATA = JSON.parse(document.getElementById("data").textContent);
const PAGE = 300;
const ALL = "all";
const FILTERS = { task: "f-task", min: "f-min", max: "f-max", off: "f-off", refusal: "f-refusal",
  rescued: "f-rescued", truncated: "f-truncated", failed: "f-failed", id: "f-id" };
const COLUMNS = [
  { key: "run", label: "run", sweep: true, value: (r) => DATA.runs[r.run].name },
  { key: "task", label: "task" },
  { key: "id", label: "id", wrap: true },  // long ids (Qasper's hashes) wrap rather than widen the page
  { key: "score", label: "score", num: true, text: (r) => fixed(r.score, 1) },
  { key: "in_format", label: "format", text: (r) => (r.in_format === null ? "" : r.in_format ? "ok" : "off") },
  { key: "refusal", label: "refusal", text: (r) => (r.refusal ? "yes" : "") },
  { key: "lenient", label: "lenient", num: true, text: (r) => fixed(r.lenient, 1) + (r.rescued ? " \u2191" : "") },
  { key: "truncated", label: "truncated", text: (r) => (r.truncated ? "yes" : r.truncated === false ? "no" : "") },
  { key: "kept", label: "kept", num: true, text: (r) => percent(r.kept) },
  { key: "input_tokens", label: "in tok", num: true, text: (r) => count(r.input_tokens ?? r.prompt_tokens) },
  { key: "output_tokens", label: "out tok", num: true, text: (r) => count(r.output_tokens) },
  { key: "cost", label: "cost $", num: true, text: (r) => (r.cost == null ? "" : r.cost.toFixed(4)) },
  { key: "latency", label: "latency s", num: true, text: (r) => fixed(r.latency, 2) },
  { key: "finish", label: "finish", text: (r) => (r.error ? "failed" : r.finish || "") },
];

const NOTHING_SCORED = "No references in this split (the test gold is hidden): nothing scored.";
const PARTIAL_NOTE = `${DATA.partial_mark}: scored on fewer examples than the task has`;
const RAW_COLUMNS = {  // sweep.csv's columns as the raw table shows them; others are shown as they are
  model: { label: "model" },
  budget: { label: "budget", num: true, text: count },
  task: { label: "task" },
  score: { label: "score", num: true, text: (v) => fixed(v, 1) },
  ci_low: { label: "95% low", num: true, text: (v) => fixed(v, 1) },
  ci_high: { label: "95% high", num: true, text: (v) => fixed(v, 1) },
  scored: { label: "scored", num: true, text: count },
  examples: { label: "examples", num: true, text: count },
  partial: { label: "partial", text: (v) => (v ? "yes" : "") },
  truncated_share: { label: "truncated", num: true, text: percent },
  kept_fraction_chars: { label: "kept", num: true, text: percent },
  cost_usd: { label: "cost $", num: true, text: (v) => fixed(v, 4) },
};

const state = { run: DATA.kind === "sweep" ? ALL : "0", sort: "", dir: "asc", open: "", shown: PAGE, filters: {} };
const cache = new Map();  // element id -> promise of its inflated value

function fixed(value, digits) { return value == null ? "" : value.toFixed(digits); }
function percent(value) { return value == null ? "" : (100 * value).toFixed(0) + "%"; }
function count(value) { return value == null ? "" : value.toLocaleString("en-US"); }
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "text") node.textContent = value;
    else if (name === "class") node.className = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child);
  return node;
}
function table(headers, rows, numeric = []) {
  const t = el("table");
  const head = el("tr");
  headers.forEach((h, i) => head.append(el("th", { text: h, class: numeric[i] ? "num" : "" })));
  t.append(el("thead", {}, head));
  const body = el("tbody");
  for (const row of rows) {
    const tr = el("tr");
    row.forEach((cell, i) => tr.append(el("td", { text: cell ?? "", class: numeric[i] ? "num" : "" })));
    body.append(tr);
  }
  t.append(body);
  return t;
}

// --- URL fragment <-> state ---------------------------------------------------------------------------------
function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  state.run = params.get("run") ?? state.run;
  if (state.run !== ALL && !DATA.runs[Number(state.run)]) {
    const byName = DATA.runs.findIndex((r) => r.name === state.run);
    state.run = byName >= 0 ? String(byName) : DATA.kind === "sweep" ? ALL : "0";
  }
  state.sort = params.get("sort") || "";
  state.dir = params.get("dir") === "desc" ? "desc" : "asc";
  state.open = params.get("open") || "";
  for (const [key, id] of Object.entries(FILTERS)) {
    const input = document.getElementById(id);
    const value = params.get(key);
    if (input.type === "checkbox") input.checked = value === "1";
    else input.value = value ?? "";
  }
}
function writeHash() {
  const params = new URLSearchParams();
  if (DATA.kind === "sweep") params.set("run", state.run === ALL ? ALL : DATA.runs[Number(state.run)].name);
  for (const [key, id] of Object.entries(FILTERS)) {
    const input = document.getElementById(id);
    if (input.type === "checkbox" ? input.checked : input.value !== "") {
      params.set(key, input.type === "checkbox" ? "1" : input.value);
    }
  }
  if (state.sort) { params.set("sort", state.sort); params.set("dir", state.dir); }
  if (state.open) params.set("open", state.open);
  const hash = params.toString();
  history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
}

// --- header, summary ----------------------------------------------------------------------------------------
function renderHeader() {
  document.getElementById("title").textContent = DATA.title;
  const run = DATA.runs[Number(state.run)];
  const meta = document.getElementById("meta");
  if (DATA.kind === "sweep" && state.run === ALL) {
    const models = [...new Set(DATA.runs.map((r) => r.manifest.model))].join(", ");
    const budgets = DATA.runs.map((r) => count(r.manifest.budget)).join(", ");
    meta.textContent = `Sweep of ${DATA.runs.length} runs: ${models} at ${budgets} tokens`;
  } else {
    const m = run.manifest;
    meta.textContent = `${m.model} through ${m.provider}, budget ${count(m.budget)} tokens (${m.prompt_style} ` +
      `prompts), ${m.split} split of ${m.source}; ${m.status || "unknown status"}, started ${m.started_at}`;
    meta.title = m.command ? `Command: ${m.command}` : "";
  }
  const notes = document.getElementById("notes");
  notes.replaceChildren(...(DATA.notes || []).map((n) => el("p", { class: "note", text: n })));
}

function renderSummary() {
  const section = document.getElementById("summary");
  section.replaceChildren();
  if (DATA.kind === "sweep" && state.run === ALL) {
    section.append(...sweepScores(DATA.sweep), ...curves(DATA.sweep.images), rawSweep(DATA.sweep));
    return;
  }
  const run = DATA.runs[Number(state.run)];
  section.append(el("h2", { text: "Tasks" }));
  const headers = ["task", "metric", "score", "95% interval", "scored", "format ok", "refusals", "lenient", "rescued",
    "words", "ref. words", "truncated", "kept", "failed"];
  const rows = run.tasks.map((t) => [
    t.task, t.metric, fixed(t.score, 2) + (t.partial ? DATA.partial_mark : ""), t.low == null ? "" : `${t.low.toFixed(2)} - ${t.high.toFixed(2)}`,
    t.scored == null ? "" : `${t.scored} of ${t.expected}`, percent(t.format_ok),
    t.refusals == null ? "" : `${t.refusals}` + (t.refusals_expected ? ` (${t.refusals_expected} expected)` : ""),
    fixed(t.lenient, 2), percent(t.rescued), t.median_words ?? "", t.median_reference_words ?? "",
    percent(t.truncated), percent(t.kept), String(t.failed),
  ]);
  const numeric = headers.map((h) => !["task", "metric", "95% interval", "scored", "refusals"].includes(h));
  const t = table(headers, rows, numeric);
  t.id = "tasks";
  section.append(t);
  const b = run.benchmark;
  const line = !b ? NOTHING_SCORED
    : b.mean != null ? `${b.title} score: ${b.mean.toFixed(2)}`
    : b.partial_mean != null ? `Partial mean: ${b.partial_mean.toFixed(2)}, the ${b.mean_note} (not a ${b.title} ` +
      `score, which needs all ${b.tasks} tasks fully scored)`
    : `No mean: ${b.mean_note}`;
  section.append(el("p", { text: line }));
  if (run.tasks.some((t) => t.partial)) {
    section.append(el("p", { text: PARTIAL_NOTE }));
  }
  section.append(images(run.images));
}

// A sweep is read as a budget × task table, then its curves; sweep.csv itself comes folded after them.
function sweepScores(sweep) {
  const parts = [el("h2", { text: "Scores by token budget" })];
  if (!sweep.scored) parts.push(el("p", { text: NOTHING_SCORED }));
  const headers = ["model", "budget", ...sweep.tasks.map((t) => t.title)];
  const rows = sweep.grid.map(([model, budget, ...cells]) => [model, count(Number(budget)), ...cells]);
  const t = table(headers, rows, headers.map((_, i) => i > 0));
  t.id = "sweep-scores";
  t.querySelectorAll("thead th").forEach((th, i) => { if (i > 1) th.title = sweep.tasks[i - 2].name; });
  parts.push(t);
  const cells = sweep.grid.flatMap((row) => row.slice(2));
  const legend = [];
  if (cells.some((c) => c.endsWith(DATA.partial_mark))) legend.push(PARTIAL_NOTE);
  if (cells.includes(sweep.no_score)) legend.push(`${sweep.no_score}: no example scored`);
  const b = DATA.runs[0].benchmark;
  if (b && sweep.grid.some((row) => row[row.length - 1] === "-")) {
    legend.push(`Average: the ${b.title} score, shown where all ${b.tasks} tasks are fully scored`);
  }
  if (legend.length) parts.push(el("p", { class: "legend", text: legend.join("; ") }));
  return parts;
}

function curves(sources) {
  const names = Object.keys(sources || {});
  if (!names.length) return [];
  const box = el("div", { class: "curves" });
  for (const name of names) box.append(el("img", { src: sources[name], alt: name, title: name }));
  return [el("h2", { text: "Curves" }), box];
}

function rawSweep(sweep) {
  const columns = sweep.columns.map((c) => ({ label: c, text: (v) => v, ...RAW_COLUMNS[c] }));
  const t = table(columns.map((c) => c.label), sweep.rows.map((row) => row.map((v, i) => columns[i].text(v))),
    columns.map((c) => c.num));
  t.querySelectorAll("thead th").forEach((th, i) => { th.title = sweep.columns[i]; });
  const summary = el("summary", { text: `sweep.csv: ${sweep.rows.length} rows, one per model, budget and task` });
  return el("details", { class: "raw" }, summary, t);
}

function images(sources) {
  const names = Object.keys(sources || {});
  const box = el("details", { class: "images" }, el("summary", { text: `Plots (${names.join(", ")})` }));
  for (const name of names) box.append(el("img", { src: sources[name], alt: name, title: name }));
  return names.length ? box : "";
}

// --- the examples table ---------------------------------------------------------------------------------------
function rows() {
  const get = (key) => document.getElementById(FILTERS[key]);
  const task = get("task").value;
  const min = get("min").value === "" ? null : Number(get("min").value);
  const max = get("max").value === "" ? null : Number(get("max").value);
  const id = get("id").value.trim().toLowerCase();
  const pool = state.run === ALL ? DATA.runs.flatMap((r) => r.rows) : DATA.runs[Number(state.run)].rows;
  const kept = pool.filter((r) =>
    (!task || r.task === task) &&
    (min === null || (r.score !== null && r.score >= min)) &&
    (max === null || (r.score !== null && r.score <= max)) &&
    (!get("off").checked || r.in_format === false) &&
    (!get("refusal").checked || r.refusal) &&
    (!get("rescued").checked || r.rescued) &&
    (!get("truncated").checked || r.truncated) &&
    (!get("failed").checked || r.error) &&
    (!id || r.id.toLowerCase().includes(id)));
  if (state.sort) {
    const column = COLUMNS.find((c) => c.key === state.sort);
    const value = column.value || ((r) => r[column.key]);
    const sign = state.dir === "desc" ? -1 : 1;
    kept.sort((a, b) => {
      const x = value(a), y = value(b);
      if (x == null || y == null) return x == null ? (y == null ? 0 : 1) : -1;  // blanks last
      return sign * (x < y ? -1 : x > y ? 1 : 0);
    });
  }
  return kept;
}

function columns() { return COLUMNS.filter((c) => !c.sweep || (DATA.kind === "sweep" && state.run === ALL)); }

function renderTable() {
  const shown = columns();
  const head = el("tr");
  for (const c of shown) {
    const th = el("th", { text: c.label, "data-key": c.key, class: c.num ? "num" : "" });
    if (state.sort === c.key) th.classList.add(state.dir === "desc" ? "sorted-desc" : "sorted-asc");
    th.addEventListener("click", () => {
      state.dir = state.sort === c.key && state.dir === "asc" ? "desc" : "asc";
      state.sort = c.key;
      update();
    });
    head.append(th);
  }
  const all = rows();
  const body = el("tbody");
  let opened = false;
  for (const r of all.slice(0, state.shown)) {
    const tr = el("tr", { class: "example", "data-key": `${r.task}/${r.id}` });
    for (const c of shown) {
      const text = c.text ? c.text(r) : c.value ? c.value(r) : r[c.key];
      const td = el("td", { text: text ?? "", class: c.num ? "num" : c.wrap ? "wrap" : "" });
      if ((c.key === "refusal" && r.refusal) || (c.key === "in_format" && r.in_format === false)) td.classList.add("yes");
      if (c.key === "finish" && r.error) { td.classList.add("failed"); td.title = r.error; }
      tr.append(td);
    }
    tr.addEventListener("click", () => toggle(tr, r, shown.length));
    body.append(tr);
    if (!opened && state.open === tr.dataset.key) {
      opened = true;
      expand(tr, r, shown.length);
    }
  }
  const t = document.getElementById("examples");
  t.querySelector(":scope > thead").replaceWith(el("thead", {}, head));
  t.querySelector(":scope > tbody").replaceWith(body);
  const total = state.run === ALL ? DATA.runs.reduce((n, r) => n + r.rows.length, 0) : DATA.runs[Number(state.run)].rows.length;
  document.getElementById("count").textContent =
    `${all.length} of ${total} examples` + (all.length > state.shown ? `, first ${state.shown} shown` : "");
  const more = document.getElementById("more");
  more.hidden = all.length <= state.shown;
  more.textContent = `Show ${Math.min(PAGE, all.length - state.shown)} more`;
}

function toggle(tr, r, span) {
  const wasOpen = tr.classList.contains("open");
  for (const row of document.querySelectorAll("#examples > tbody > tr.detail")) row.remove();
  for (const row of document.querySelectorAll("#examples > tbody > tr.open")) row.classList.remove("open");
  state.open = wasOpen ? "" : tr.dataset.key;
  writeHash();
  if (!wasOpen) expand(tr, r, span);
}

function expand(tr, r, span) {
  tr.classList.add("open");
  const cell = el("td", { colspan: String(span) });
  tr.after(el("tr", { class: "detail" }, cell));
  renderDetail(cell, r);
}

// --- one example ----------------------------------------------------------------------------------------------
function inflate(elementId) {
  if (!cache.has(elementId)) {
    const bytes = Uint8Array.from(atob(document.getElementById(elementId).textContent), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    cache.set(elementId, new Response(stream).text().then(JSON.parse));
  }
  return cache.get(elementId);
}

async function openExample(key) {
  const example = await inflate(`x${DATA.examples[key]}`);
  return { ...example, document: await inflate(`d${example.document}`) };
}

function promptAsSent(doc, r) {
  const style = DATA.runs[r.run].manifest.prompt_style;
  const p = doc.prompts[style];
  const pre = el("pre", { class: "prompt" });
  if (r.truncated) {
    const kept = r.kept_chars ?? Math.round((r.kept ?? 0) * doc.document.length);  // older records: token share
    const notice = el("mark", { class: "trim", text: p.separator });
    if (p.cut_start) {  // the document's tail is kept, the notice before it
      pre.append(p.before, notice, doc.document.slice(doc.document.length - kept) + p.between + p.rest);
    } else {
      pre.append(p.before + doc.document.slice(0, kept), notice, p.rest);
    }
  } else {
    pre.append(p.before + doc.document + p.between + p.rest);
  }
  if (p.prefill) pre.append(el("span", { class: "prefill", text: `\n[assistant prefill] ${p.prefill}` }));
  return pre;
}

async function renderDetail(cell, r) {
  cell.append(el("p", { text: "Loading..." }));
  let doc;
  try {
    doc = await openExample(`${r.task}/${r.id}`);
  } catch (error) {
    cell.replaceChildren(el("p", { class: "failed", text: `This example's data could not be read: ${error}` }));
    return;
  }
  const parts = [];
  parts.push(el("h3", { text: "Prediction" }));
  parts.push(el("pre", { class: "prediction", text: r.prediction ?? (r.error ? `failed: ${r.error}` : "(none)") }));
  parts.push(el("h3", { text: doc.references.length === 1 ? "Reference" : `References (${doc.references.length})` }));
  if (!doc.references.length) parts.push(el("p", { text: "No reference (test split: the gold is hidden)." }));
  doc.references.forEach((ref) => parts.push(el("pre", { class: "reference", text: ref })));
  if (DATA.kind === "sweep") {
    const same = DATA.runs.map((run) => run.rows.find((x) => x.task === r.task && x.id === r.id)).filter(Boolean);
    parts.push(el("h3", { text: "Across the sweep" }));
    const t = table(["run", "budget", "kept", "score", "lenient", "prediction"],
      same.map((x) => [DATA.runs[x.run].name, count(DATA.runs[x.run].manifest.budget), percent(x.kept),
        fixed(x.score, 1), fixed(x.lenient, 1), x.prediction ?? (x.error ? "failed" : "")]),
      [false, true, true, true, true, false]);
    t.className = "across";
    parts.push(t);
  }
  const approximate = r.kept_chars == null ? "; where the cut lies is estimated, the record predates kept_chars" : "";
  const cut = r.truncated ? `, document cut to ${percent(r.kept)} (trim notice highlighted${approximate})` : "";
  parts.push(el("h3", { text: `Prompt as sent${cut}` }));
  const prompt = promptAsSent(doc, r);
  parts.push(prompt);
  cell.replaceChildren(...parts);
  const notice = prompt.querySelector("mark.trim");
  if (notice) prompt.scrollTop = notice.offsetTop - prompt.clientHeight / 3;  // where the document was cut
}

// --- wiring ---------------------------------------------------------------------------------------------------
function update(resetPage = true) {
  if (resetPage) state.shown = PAGE;
  writeHash();
  renderTable();
}

function setup() {
  const taskSelect = document.getElementById("f-task");
  const tasks = [...new Set(DATA.runs.flatMap((r) => r.tasks.map((t) => t.task)))];
  for (const t of tasks) taskSelect.append(el("option", { value: t, text: t }));
  const runSelect = document.getElementById("run");
  if (DATA.kind === "sweep") {
    document.getElementById("run-picker").hidden = false;
    runSelect.append(el("option", { value: ALL, text: "all points (sweep tables)" }));
    DATA.runs.forEach((r, i) => runSelect.append(el("option", { value: String(i), text: r.name })));
  }
  readHash();
  runSelect.value = state.run;
  runSelect.addEventListener("change", () => { state.run = runSelect.value; renderHeader(); renderSummary(); update(); });
  for (const id of Object.values(FILTERS)) document.getElementById(id).addEventListener("input", () => update());
  document.getElementById("more").addEventListener("click", () => { state.shown += PAGE; renderTable(); });
  window.addEventListener("hashchange", () => { readHash(); runSelect.value = state.run; renderHeader(); renderSummary(); renderTable(); });
  renderHeader();
  renderSummary();
  update(false);
  document.body.dataset.ready = "1";
}

setup();
