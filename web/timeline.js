// pgvigil's timeline page: reads /api (same origin, same auth) and draws with uPlot. No build
// step: plain ES module. Every text from the store goes through textContent, never innerHTML.
/* global uPlot */

const COLOURS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
const MAX_EVENTS = 2000;
const MAX_SERIES_LINES = 8;
const DEFAULT_WINDOW_MS = 6 * 3_600_000;
/** The longest window the API reads (MAX_WINDOW_MS in src/http/api-routes.ts). */
const MAX_WINDOW_MS = 31 * 86_400_000;

const state = {
  fromMs: 0,
  toMs: 0,
  filters: { target: '', database: '', table: '', kind: '', rule: '' },
  alerts: [],
  /** alert id -> its detail from /api/alerts/:id */
  details: new Map(),
  /** event id -> alert ids that name it as evidence */
  evidenceOf: new Map(),
  events: [],
  seen: { target: new Set(), database: new Set(), kind: new Set(), rule: new Set() },
  selectedAlert: null,
  highlightEvent: null,
};
let eventsPlot = null;
let seriesPlot = null;

// ------------------------------------------------------------------ small DOM and API helpers

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  return node;
}

async function api(path, params = {}) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '' && v !== undefined && v !== null));
  const response = await fetch(`${path}${query.size > 0 ? `?${query}` : ''}`, { headers: { accept: 'application/json' } });
  const body = await response.json();
  if (!response.ok) throw new Error(`${path}: ${body.message ?? response.status}`);
  return body;
}

const pad = (n, width = 2) => String(n).padStart(width, '0');
function utc(ms) {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}
const toInput = (ms) => new Date(ms).toISOString().slice(0, 19);
const fromInput = (text) => Date.parse(`${text}Z`);

// ------------------------------------------------------------------ window and filters

function readUrl() {
  const params = new URLSearchParams(location.search);
  const from = Number(params.get('from'));
  const to = Number(params.get('to'));
  for (const key of Object.keys(state.filters)) state.filters[key] = params.get(key) ?? '';
  return from > 0 && to > from ? { fromMs: from, toMs: to } : null;
}

function writeUrl() {
  const params = new URLSearchParams({ from: String(Math.round(state.fromMs)), to: String(Math.round(state.toMs)) });
  for (const [key, value] of Object.entries(state.filters)) if (value) params.set(key, value);
  history.replaceState(null, '', `?${params}`);
  const report = new URLSearchParams({ format: 'html', from: String(Math.round(state.fromMs)), to: String(Math.round(state.toMs)) });
  if (state.filters.target) report.set('target', state.filters.target);
  document.getElementById('report-link').href = `/api/report?${report}`;
}

async function setWindow(fromMs, toMs) {
  state.fromMs = Math.round(fromMs);
  state.toMs = Math.round(toMs);
  const form = document.getElementById('window');
  form.from.value = toInput(state.fromMs);
  form.to.value = toInput(state.toMs);
  await reload();
}

/**
 * With nothing in the last hours, start at the newest alert: what someone opening the page came
 * for. The window spans the alert and the events and samples its evidence names, with a margin:
 * five minutes around one resting on samples (the series around it), five seconds around one
 * from the log alone (a store `pgvigil analyze` made: an incident of seconds stays readable).
 */
async function initialWindow() {
  const fromUrl = readUrl();
  if (fromUrl) return fromUrl;
  const now = Date.now();
  const recent = await api('/api/events', { from: now - DEFAULT_WINDOW_MS, to: now, limit: 1 });
  if (recent.events.length > 0) return { fromMs: now - DEFAULT_WINDOW_MS, toMs: now };
  const { alerts } = await api('/api/alerts', { limit: 1 });
  if (alerts.length === 0) return { fromMs: now - DEFAULT_WINDOW_MS, toMs: now };
  const a = alerts[0];
  const { evidence } = await api(`/api/alerts/${a.id}`);
  const times = [a.started_ms, a.resolved_ms ?? a.updated_ms, ...evidence.events.map((e) => e.ts_ms), ...evidence.series.map((p) => p.ts_ms)];
  const [first, last] = [Math.min(...times), Math.max(...times)];
  const margin = Math.max(a.basis === 'log' ? 5_000 : 5 * 60_000, (last - first) / 4);
  return { fromMs: first - margin, toMs: last + margin };
}

function fillSelect(name, values) {
  const select = document.querySelector(`#filters [name=${name}]`);
  const wanted = state.filters[name];
  if (wanted) values.add(wanted);
  const have = new Set([...select.options].map((o) => o.value));
  for (const value of [...values].sort()) if (!have.has(value)) select.append(el('option', { value }, value));
  select.value = wanted;
}

// ------------------------------------------------------------------ loading

// The pgvigil severity scale (docs/rules.md): an info alert explains a failure nobody needs to act
// on, so it never sits above a warning.
const SEVERITY_RANK = { critical: 0, error: 1, warning: 2, info: 3 };

/** Firing first; then the most severe; then the newest. */
function byUrgency(a, b) {
  if (a.state !== b.state) return a.state === 'firing' ? -1 : 1;
  const rank = (alert) => SEVERITY_RANK[alert.severity] ?? SEVERITY_RANK.info;
  return rank(a) - rank(b) || b.started_ms - a.started_ms;
}

async function reload() {
  writeUrl();
  const { fromMs, toMs, filters } = state;
  const [inWindow, firing, events] = await Promise.all([
    api('/api/alerts', { from: fromMs, to: toMs, limit: 200 }),
    api('/api/alerts', { state: 'firing', limit: 200 }),
    api('/api/events', { from: fromMs, to: toMs, target: filters.target, database: filters.database, kind: filters.kind, limit: MAX_EVENTS }),
  ]);
  const byId = new Map([...firing.alerts, ...inWindow.alerts].map((a) => [a.id, a]));
  state.alerts = [...byId.values()].sort(byUrgency);
  await loadDetails(state.alerts);
  state.events = events.events.filter(matchesTable).reverse();
  for (const a of state.alerts) { state.seen.rule.add(a.rule_id); state.seen.target.add(a.target); }
  for (const e of events.events) { state.seen.kind.add(e.kind); state.seen.target.add(e.target); if (e.database) state.seen.database.add(e.database); }
  for (const name of ['target', 'database', 'kind', 'rule']) fillSelect(name, state.seen[name]);
  document.getElementById('events-note').textContent = events.truncated
    ? `Showing the newest ${MAX_EVENTS} events of this window: zoom in to see the others.`
    : `${state.events.length} event(s) in this window.`;
  renderAlerts();
  renderEvents();
  drawEventsChart();
  await drawSeriesChart();
  if (state.highlightEvent !== null) showEvent(state.highlightEvent);
}

async function loadDetails(alerts) {
  const missing = alerts.filter((a) => !state.details.has(a.id)).slice(0, 100);
  const details = await Promise.all(missing.map((a) => api(`/api/alerts/${a.id}`)));
  for (const d of details) state.details.set(d.id, d);
  state.evidenceOf = new Map();
  for (const a of alerts) {
    for (const id of state.details.get(a.id)?.evidence.event_ids ?? []) state.evidenceOf.set(id, [...(state.evidenceOf.get(id) ?? []), a.id]);
  }
}

/** The table filter: the event's table (autovacuum, DDL) or its lock's relation, else its text. */
function matchesTable(event) {
  const wanted = state.filters.table.trim().toLowerCase();
  if (!wanted) return true;
  const d = event.details ?? {};
  const names = [d.table && `${d.schema}.${d.table}`, d.relation, ...(d.relations ?? []), d.lock_object?.description, event.message];
  return names.some((name) => typeof name === 'string' && name.toLowerCase().includes(wanted));
}

function visibleAlerts() {
  return state.alerts.filter((a) => (!state.filters.rule || a.rule_id === state.filters.rule) && (!state.filters.target || a.target === state.filters.target));
}

// ------------------------------------------------------------------ alerts

function renderAlerts() {
  const list = document.getElementById('alerts');
  const alerts = visibleAlerts();
  document.getElementById('alerts-count').textContent = `(${alerts.filter((a) => a.state === 'firing').length} open, ${alerts.length} shown)`;
  list.replaceChildren(...alerts.map((a) => el('li', {
    class: `${a.severity} ${a.state}${state.selectedAlert === a.id ? ' selected' : ''}`, id: `alert-${a.id}`, 'data-alert-id': String(a.id),
    onclick: () => openAlert(a.id),
  },
  el('div', {}, el('span', { class: `badge ${a.state}` }, a.state), el('span', { class: 'badge' }, a.severity), el('span', { class: 'rule' }, `#${a.id} ${a.rule_id}`), ` on ${a.target}`),
  el('div', { class: 'summary' }, a.summary),
  el('div', { class: 'when' }, `fired ${utc(a.started_ms)}${a.resolved_ms ? `, resolved ${utc(a.resolved_ms)}` : ', still firing'}`))));
  if (alerts.length === 0) list.append(el('li', { class: 'info' }, 'No alert was firing in this window.'));
}

function openAlert(id) {
  state.selectedAlert = id;
  renderAlerts();
  const d = state.details.get(id);
  const panel = document.getElementById('alert-detail');
  panel.hidden = false;
  if (!d) { panel.replaceChildren(`Alert #${id}: no details`); return; }
  const facts = Object.entries(d.evidence.facts ?? {});
  panel.replaceChildren(...[
    el('h2', {}, `#${d.id} ${d.rule_id}`, ' ', el('span', { class: `badge ${d.state}` }, d.state), d.basis ? el('span', { class: 'badge' }, `basis: ${d.basis}`) : null),
    el('p', {}, d.summary),
    el('p', { class: 'note' }, [`fired ${utc(d.started_ms)}`, `updated ${utc(d.updated_ms)}`, d.resolved_ms ? `resolved ${utc(d.resolved_ms)}` : 'still firing'].join(', '),
      d.transitions.length > 1 ? ` (${d.transitions.map((t) => `${t.to} ${utc(t.ts_ms)}`).join(', ')})` : ''),
    facts.length > 0 ? el('table', {}, facts.map(([k, v]) => el('tr', {}, el('td', {}, k), el('td', {}, String(v))))) : null,
    el('h3', {}, `Evidence (${d.evidence.events.length} event(s))`),
    el('ol', { id: 'evidence' }, d.evidence.events.map((e) => el('li', {},
      el('a', { href: `#ev-${e.id}`, 'data-event-id': String(e.id), onclick: (click) => { click.preventDefault(); void goToEvent(e); } }, `${utc(e.ts_ms)} ${e.kind}`),
      ` ${e.message.split('\n', 1)[0]}`))),
    d.evidence.series.length > 0 ? el('p', { class: 'note' }, `Series: ${d.evidence.series.map((s) => `${s.name}=${s.value}`).join(', ')}`) : null,
  ].filter(Boolean));
  drawEventsChart();
}

/** From an alert's evidence to the event on the timeline, widening the window when it lies outside. */
async function goToEvent(event) {
  state.highlightEvent = event.id;
  if (event.ts_ms < state.fromMs || event.ts_ms > state.toMs || !state.events.some((e) => e.id === event.id)) {
    state.filters = { ...state.filters, kind: '', table: '', database: '' };
    syncFilterForm();
    const half = Math.max(5 * 60_000, (state.toMs - state.fromMs) / 2);
    await setWindow(event.ts_ms - half, event.ts_ms + half);
  } else {
    showEvent(event.id);
  }
}

function showEvent(id) {
  for (const row of document.querySelectorAll('#events tr.highlight')) row.classList.remove('highlight');
  const row = document.getElementById(`ev-${id}`);
  if (!row) return;
  row.classList.add('highlight');
  row.scrollIntoView({ block: 'center' });
}

// ------------------------------------------------------------------ events table

function renderEvents() {
  const rows = [...state.events].reverse().map((e) => {
    const alerts = state.evidenceOf.get(e.id) ?? [];
    const details = el('pre', { hidden: '' }, JSON.stringify({ ...e.details, source: e.source }, null, 1));
    return el('tr', { id: `ev-${e.id}`, class: `${alerts.length > 0 ? 'evidence ' : ''}level-${e.level}` },
      el('td', { class: 'ts' }, utc(e.ts_ms)), el('td', {}, e.target), el('td', { class: 'kind' }, e.kind), el('td', {}, e.database ?? ''),
      el('td', { class: 'msg', title: 'click for the details', onclick: () => { details.hidden = !details.hidden; } }, e.line, details),
      el('td', {}, alerts.map((id) => el('a', { href: `#alert-${id}`, class: 'evidence-of', onclick: (click) => { click.preventDefault(); openAlert(id); document.getElementById('alerts-panel').scrollIntoView(); } }, `evidence of #${id} `))));
  });
  document.querySelector('#events tbody').replaceChildren(...rows);
}

// ------------------------------------------------------------------ charts

function chartWidth(id) {
  return Math.max(300, document.getElementById(id).clientWidth);
}

/** uPlot's drag selects a range; the page loads that window instead of stretching what it has. */
function zoomOnSelect(u) {
  if (u.select.width < 4) return;
  const from = u.posToVal(u.select.left, 'x') * 1000;
  const to = u.posToVal(u.select.left + u.select.width, 'x') * 1000;
  u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
  void setWindow(from, to);
}

function shadeAlerts(u) {
  const { ctx, bbox } = u;
  ctx.save();
  // Labels of alerts that start close together go one under the other, not over each other.
  const labelled = [];
  const labelWidth = 32 * devicePixelRatio;
  for (const a of visibleAlerts()) {
    const from = Math.max(a.started_ms, state.fromMs) / 1000;
    const to = Math.min(a.resolved_ms ?? state.toMs, state.toMs) / 1000;
    if (to < from) continue;
    const x0 = u.valToPos(from, 'x', true);
    const x1 = Math.max(x0 + 2, u.valToPos(to, 'x', true));
    ctx.fillStyle = a.id === state.selectedAlert ? 'rgba(207,34,46,0.25)' : 'rgba(207,34,46,0.10)';
    ctx.fillRect(x0, bbox.top, x1 - x0, bbox.height);
    ctx.fillStyle = '#a40e26';
    ctx.font = `${11 * devicePixelRatio}px system-ui`;
    const row = labelled.filter((x) => Math.abs(x - x0) < labelWidth).length;
    labelled.push(x0);
    ctx.fillText(`#${a.id}`, x0 + 3, bbox.top + (12 + row * 13) * devicePixelRatio);
  }
  ctx.restore();
}

const xScale = () => ({ time: true, range: () => [state.fromMs / 1000, state.toMs / 1000] });
/** Ticks far enough apart that the first tick's date ("12/1/26 10:24pm") does not run into the next minute's label. */
const timeAxis = { space: 80 };
/** Axis times in UTC, as every time on the page and in PostgreSQL's log_timezone of most servers. */
const tzDate = (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC');
const plotHooks = { drawClear: [shadeAlerts], setSelect: [zoomOnSelect] };

function drawEventsChart() {
  eventsPlot?.destroy();
  const kinds = [...new Set(state.events.map((e) => e.kind))].sort();
  const xs = state.events.map((e) => e.ts_ms / 1000);
  const lanes = kinds.map((kind, lane) => state.events.map((e) => (e.kind === kind ? lane : null)));
  eventsPlot = new uPlot({
    width: chartWidth('events-chart'), tzDate, height: 70 + 26 * Math.max(1, kinds.length),
    cursor: { drag: { x: true, y: false, setScale: false } },
    scales: { x: xScale(), y: { range: () => [-0.6, Math.max(0.6, kinds.length - 0.4)] } },
    axes: [timeAxis, { size: 150, splits: () => kinds.map((_, i) => i), values: (_u, splits) => splits.map((i) => kinds[i] ?? '') }],
    series: [{ label: 'time' }, ...kinds.map((kind, i) => ({ label: kind, stroke: COLOURS[i % COLOURS.length], paths: () => null, points: { show: true, size: 9, fill: COLOURS[i % COLOURS.length] } }))],
    legend: { show: false },
    hooks: plotHooks,
  }, [xs, ...lanes], document.getElementById('events-chart'));
}

async function drawSeriesChart() {
  seriesPlot?.destroy();
  seriesPlot = null;
  const name = document.getElementById('series-name').value;
  const note = document.getElementById('series-note');
  const target = document.getElementById('series-chart');
  const { series } = await api('/api/series', { name, from: state.fromMs, to: state.toMs, target: state.filters.target });
  const lines = series.filter((s) => s.points.length > 0 && (!state.filters.database || (s.labels.datname ?? state.filters.database) === state.filters.database));
  if (lines.length === 0) {
    note.textContent = 'not sampled in this window (a store from `pgvigil analyze` holds the log only)';
    target.replaceChildren();
    return;
  }
  const peak = (s) => Math.max(...s.points.map(([, v]) => v ?? 0));
  const shown = lines.sort((a, b) => peak(b) - peak(a)).slice(0, MAX_SERIES_LINES);
  note.textContent = lines.length > shown.length ? `${shown.length} of ${lines.length} series, highest peaks first` : '';
  const data = uPlot.join(shown.map((s) => [s.points.map(([t]) => t / 1000), s.points.map(([, v]) => v)]));
  seriesPlot = new uPlot({
    width: chartWidth('series-chart'), tzDate, height: 220,
    cursor: { drag: { x: true, y: false, setScale: false } },
    scales: { x: xScale() },
    axes: [timeAxis, { size: 70 }],
    series: [{ label: 'time' }, ...shown.map((s, i) => ({ label: seriesLabel(s), stroke: COLOURS[i % COLOURS.length], width: 1.5, spanGaps: false }))],
    hooks: plotHooks,
  }, data, target);
  for (const label of target.querySelectorAll('.u-legend .u-label')) label.title = label.textContent;
}

function seriesLabel(s) {
  const l = s.labels;
  const who = l.kind ? `${l.kind}${l.pid ? ` pid ${l.pid}` : ''}${l.datname ? ` ${l.datname}` : ''}${l.query ? `: ${l.query}` : l.name ? ` ${l.name}` : ''}`
    : Object.values(l).filter(Boolean).join(' ');
  return `${s.target} ${who}`.trim();
}

// ------------------------------------------------------------------ wiring

function syncFilterForm() {
  const form = document.getElementById('filters');
  for (const [key, value] of Object.entries(state.filters)) form[key].value = value;
}

function wire() {
  const windowForm = document.getElementById('window');
  windowForm.addEventListener('submit', (submit) => {
    submit.preventDefault();
    const from = fromInput(windowForm.from.value);
    const to = fromInput(windowForm.to.value);
    if (from < to) void setWindow(from, to);
  });
  for (const button of windowForm.querySelectorAll('button[data-last]')) {
    button.addEventListener('click', () => { const now = Date.now(); void setWindow(now - Number(button.dataset.last), now); });
  }
  document.getElementById('zoom-out').addEventListener('click', () => {
    const span = Math.min(4 * (state.toMs - state.fromMs), MAX_WINDOW_MS);
    const middle = (state.fromMs + state.toMs) / 2;
    void setWindow(middle - span / 2, middle + span / 2);
  });
  const filters = document.getElementById('filters');
  filters.addEventListener('change', () => {
    for (const key of Object.keys(state.filters)) state.filters[key] = filters[key].value;
    void reload();
  });
  filters.addEventListener('submit', (submit) => submit.preventDefault());
  document.getElementById('series-name').addEventListener('change', () => void drawSeriesChart());
  window.addEventListener('resize', () => { drawEventsChart(); void drawSeriesChart(); });
}

async function main() {
  wire();
  const { fromMs, toMs } = await initialWindow();
  syncFilterForm();
  await setWindow(fromMs, toMs);
  document.body.dataset.ready = 'true';
}

main().catch((err) => {
  document.getElementById('events-note').textContent = `Could not load: ${err.message}`;
  console.error(err);
});
