/**
 * `GET /dashboard` in local mode: one self-contained page (no CDN: it must work offline) that polls
 * `/metrics` every second and draws the same widgets as the CloudWatch dashboard (lib/constructs/monitoring.ts)
 * from the same metric names and dimensions. Each chart exposes `data-total` (the sum of what it draws)
 * so a browser test can tell a chart with data from an empty one.
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Attention Queue — local dashboard</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  :root { --bg:#0f1419; --panel:#182029; --text:#d8dee9; --muted:#8a96a3; --grid:#2a3542; }
  * { box-sizing: border-box; }
  body { margin:0; font:13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background:var(--bg); color:var(--text); }
  header { display:flex; gap:24px; align-items:baseline; padding:12px 16px; border-bottom:1px solid var(--grid); flex-wrap:wrap; }
  header h1 { font-size:16px; margin:0 16px 0 0; }
  .stat b { font-size:18px; display:block; }
  .stat span { color:var(--muted); }
  main { display:grid; grid-template-columns:repeat(auto-fill, minmax(420px, 1fr)); gap:12px; padding:12px; }
  section { background:var(--panel); border-radius:6px; padding:10px 12px; }
  section h2 { font-size:13px; margin:0 0 6px; font-weight:600; }
  section p.hint { margin:0 0 6px; color:var(--muted); font-size:11px; }
  canvas { width:100%; height:170px; display:block; }
  .legend { display:flex; flex-wrap:wrap; gap:4px 12px; margin-top:4px; font-size:11px; color:var(--muted); }
  .legend i { display:inline-block; width:10px; height:3px; margin-right:4px; vertical-align:middle; }
  table { width:100%; border-collapse:collapse; font-size:12px; }
  th, td { text-align:right; padding:3px 6px; border-bottom:1px solid var(--grid); }
  th:first-child, td:first-child { text-align:left; }
  th { color:var(--muted); font-weight:500; }
  .wide { grid-column: span 2; }
  #error { color:#ff7b72; }
</style>
</head>
<body>
<header>
  <h1>Attention Queue · local</h1>
  <div class="stat"><b id="s-active">–</b><span>active stores</span></div>
  <div class="stat"><b id="s-backlog">–</b><span>backlog</span></div>
  <div class="stat"><b id="s-rate">–</b><span>deliveries/s</span></div>
  <div class="stat"><b id="s-dead">–</b><span>dead-lettered</span></div>
  <div class="stat"><b id="s-accepted">–</b><span>accepted</span></div>
  <div class="stat"><span id="updated">waiting for /metrics…</span> <span id="error"></span></div>
</header>
<main id="charts"></main>
<script>
"use strict";
// Each widget mirrors one of the CloudWatch dashboard's (lib/constructs/monitoring.ts).
// A series is a counter key ('Name' or 'Name{dim=value}') or a prefix ending in '{' (one line per dimension value).
const WIDGETS = [
  { id: 'ingest', title: 'Ingest: tasks accepted, rejected, signal failures', unit: '/s',
    series: ['TasksAccepted', 'TasksRejected', 'SignalFailures'] },
  { id: 'deliveries', title: 'Deliveries and failures', unit: '/s',
    series: ['TasksDelivered', 'TasksFailed{', 'TasksDeadLettered', 'MarketplaceThrottled', 'TasksDuplicate'] },
  { id: 'adaptive-rate', title: 'Adaptive rate: stores slowed by the marketplace (headers, backoff) and 429s', unit: '/s',
    series: ['MarketplaceRateAdjusted{', 'MarketplaceThrottled'] },
  { id: 'attention', title: 'Attention queue depth', unit: 'msgs', sampled: true,
    series: ['visible', 'inFlight', 'delayed'] },
  { id: 'slices', title: 'Slices: started and why each ended', unit: '/s',
    series: ['SlicesStarted', 'SlicesEnded{', 'SlicesUnderCampaign{'] },
  { id: 'leases', title: 'Leases and attentions', unit: '/s',
    series: ['LeaseAcquired', 'LeaseBlocked{', 'AttentionsPublished{', 'AttentionsDiscarded{', 'AttentionsCoalesced{'] },
  { id: 'reconciler', title: 'Reconciler repairs', unit: '/s',
    series: ['ReconcilerRepairs{', 'ReconcilerStoresChecked'] },
  { id: 'dlq', title: 'Dead-letter inflow by reason code, and purged tasks', unit: '/s',
    series: ['TasksDeadLettered{', 'TasksPurged'] },
  { id: 'latency', title: 'Marketplace latency', unit: 'ms', latency: true,
    series: ['MarketplaceLatency p50', 'MarketplaceLatency p90', 'MarketplaceLatency p99'] },
  { id: 'backlog', title: 'Backlog of the busy stores', unit: 'tasks', sampled: true, series: ['backlog'] },
];
const COLORS = ['#5ab0f6', '#f6c85f', '#ef6f6c', '#6fd08c', '#c38fff', '#ff9f43', '#48dbfb', '#ff6b9d', '#a3cb38', '#e0e0e0'];
const WINDOW = 180;
const sampled = { t: [], visible: [], inFlight: [], delayed: [], backlog: [] };

const charts = document.getElementById('charts');
for (const w of WIDGETS) {
  const s = document.createElement('section');
  s.innerHTML = '<h2></h2><canvas data-total="0" data-series="0"></canvas><div class="legend"></div>';
  s.querySelector('h2').textContent = w.title + ' (' + w.unit + ')';
  s.querySelector('canvas').id = 'chart-' + w.id;
  s.id = 'w-' + w.id;
  charts.appendChild(s);
}
for (const [id, title] of [['top-backlog', 'Top 20 stores by backlog'], ['top-age', 'Top 20 stores by oldest message age']]) {
  const s = document.createElement('section');
  s.className = 'wide';
  s.innerHTML = '<h2></h2><table id="' + id + '"><thead><tr><th>store</th><th>tenant</th><th>plan</th><th>status</th>' +
    '<th>backlog</th><th>in flight</th><th>delayed</th><th>oldest (s)</th><th>busy (s)</th><th>consumers</th><th>rate (/s)</th><th>DLQ</th></tr></thead><tbody></tbody></table>';
  s.querySelector('h2').textContent = title;
  charts.appendChild(s);
}
// The CloudWatch dashboard's Logs Insights table (PerStoreLogQueries.measures), from the scoped worker metrics.
{
  const s = document.createElement('section');
  s.className = 'wide';
  s.id = 'w-per-store';
  s.innerHTML = '<h2></h2><table id="per-store"><thead><tr><th>store</th><th>republished</th><th>discarded</th>' +
    '<th>lease blocks</th><th>rate-limited</th><th>max oldest task (ms)</th><th>max drain (ms)</th></tr></thead><tbody></tbody></table>';
  s.querySelector('h2').textContent = 'Per-store measures (top 20 by republished attentions)';
  charts.appendChild(s);
}

function pick(widget, m) {
  const lines = [];
  if (widget.sampled) {
    for (const k of widget.series) lines.push([k, sampled[k].slice(-WINDOW)]);
    return lines;
  }
  const source = widget.latency ? m.series.latency : m.series.counts;
  for (const k of widget.series) {
    if (k.endsWith('{')) {
      for (const key of Object.keys(source).sort()) if (key.startsWith(k)) lines.push([key, source[key].slice(-WINDOW)]);
    } else {
      lines.push([k, (source[k] || []).slice(-WINDOW)]);
    }
  }
  return lines;
}

function draw(canvas, lines) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  canvas.width = w * dpr; canvas.height = h * dpr;
  const g = canvas.getContext('2d');
  g.scale(dpr, dpr);
  g.clearRect(0, 0, w, h);
  let max = 0, total = 0, n = 0;
  for (const [, v] of lines) for (const x of v) if (x !== null) { max = Math.max(max, x); total += x; n = Math.max(n, v.length); }
  max = max <= 0 ? 1 : max * 1.1;
  const left = 40, bottom = h - 14, top = 6, right = w - 6;
  g.strokeStyle = '#2a3542'; g.fillStyle = '#8a96a3'; g.font = '10px system-ui'; g.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const y = bottom - ((bottom - top) * i) / 4;
    g.beginPath(); g.moveTo(left, y); g.lineTo(right, y); g.stroke();
    const label = (max * i) / 4;
    g.fillText(label >= 100 ? label.toFixed(0) : label.toFixed(1), 2, y + 3);
  }
  const span = Math.max(2, n);
  g.fillText('-' + span + 's', left, h - 2);
  g.fillText('now', right - 18, h - 2);
  lines.forEach(([, v], i) => {
    g.strokeStyle = COLORS[i % COLORS.length]; g.lineWidth = 1.5; g.beginPath();
    let started = false;
    v.forEach((x, j) => {
      if (x === null) { started = false; return; }
      const px = left + ((right - left) * (j + span - v.length)) / (span - 1);
      const py = bottom - ((bottom - top) * x) / max;
      if (started) g.lineTo(px, py); else { g.moveTo(px, py); started = true; }
    });
    g.stroke();
  });
  canvas.dataset.total = String(Math.round(total * 1000) / 1000);
  canvas.dataset.series = String(lines.length);
  const legend = canvas.nextElementSibling;
  legend.innerHTML = '';
  lines.forEach(([name], i) => {
    const item = document.createElement('span');
    item.innerHTML = '<i style="background:' + COLORS[i % COLORS.length] + '"></i>';
    item.appendChild(document.createTextNode(name));
    legend.appendChild(item);
  });
}

function table(id, rows, cells) {
  const body = document.querySelector('#' + id + ' tbody');
  body.innerHTML = '';
  for (const r of rows) {
    const tr = document.createElement('tr');
    tr.dataset.store = r.storeId;
    for (const v of cells(r)) {
      const td = document.createElement('td'); td.textContent = v === null ? '–' : String(v); tr.appendChild(td);
    }
    body.appendChild(tr);
  }
}
const storeCells = (r) => [r.storeId, r.tenantId, r.plan, r.status, r.backlog, r.inFlight, r.delayed, r.oldestAgeSeconds, r.busySeconds, r.activeConsumers, r.rate ? r.rate.effective + ' / ' + r.rate.configured + (r.rate.reason === 'policy' ? '' : ' (' + r.rate.reason + ')') : '', r.deadLetters];
const measureCells = (r) => [r.storeId, r.republished, r.discarded, r.leaseBlocks, r.rateLimited, r.oldestTaskMs, r.maxDrainMs];

const fmt = (x) => x.toLocaleString('en-US');
async function tick() {
  try {
    const res = await fetch('/metrics', { cache: 'no-store' });
    const m = await res.json();
    const st = m.stores;
    sampled.t.push(m.at);
    sampled.visible.push(st ? st.attentionQueue.visible : null);
    sampled.inFlight.push(st ? st.attentionQueue.inFlight : null);
    sampled.delayed.push(st ? st.attentionQueue.delayed : null);
    sampled.backlog.push(st ? st.backlog : null);
    for (const k of Object.keys(sampled)) if (sampled[k].length > WINDOW) sampled[k].shift();
    for (const w of WIDGETS) draw(document.getElementById('chart-' + w.id), pick(w, m));
    const delivered = m.series.counts['TasksDelivered'] || [];
    const recent = delivered.slice(-6, -1);
    const rate = recent.length ? recent.reduce((a, b) => a + b, 0) / recent.length : 0;
    document.getElementById('s-active').textContent = st ? fmt(st.active) + (st.activeCapped ? '+' : '') : '–';
    document.getElementById('s-backlog').textContent = st ? fmt(st.backlog) : '–';
    document.getElementById('s-rate').textContent = rate.toFixed(1);
    document.getElementById('s-dead').textContent = fmt(m.counters['TasksDeadLettered'] || 0);
    document.getElementById('s-accepted').textContent = fmt(m.counters['TasksAccepted'] || 0);
    if (st) { table('top-backlog', st.byBacklog, storeCells); table('top-age', st.byAge, storeCells); }
    table('per-store', m.perStore || [], measureCells);
    document.getElementById('updated').textContent = 'updated ' + new Date(m.at).toLocaleTimeString();
    document.getElementById('error').textContent = '';
    document.body.dataset.polls = String(Number(document.body.dataset.polls || 0) + 1);
  } catch (e) {
    document.getElementById('error').textContent = String(e);
  }
}
tick();
setInterval(tick, 1000);
</script>
</body>
</html>
`;
