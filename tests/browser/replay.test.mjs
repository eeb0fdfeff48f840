// End-to-end test of the replay report in headless Chromium (Playwright's playwright-core driving
// Debian's /usr/bin/chromium): the page, opened from disk with every network request refused,
// must show the run as its trace has it. The trace is parsed here, independently of the page.
// Usage: node replay.test.mjs PAGE.html TRACE.jsonl SCREENSHOT.png [SCENARIO.json]
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const [pagePath, tracePath, shotPath, scenarioPath] = process.argv.slice(2);
if (!pagePath || !tracePath || !shotPath) {
  console.error('usage: node replay.test.mjs PAGE.html TRACE.jsonl SCREENSHOT.png [SCENARIO.json]');
  process.exit(2);
}

// ---- The trace, read independently of the page
const lines = fs.readFileSync(tracePath, 'utf8').split('\n').filter((l) => l.trim() !== '');
const header = JSON.parse(lines[0]);
const events = lines.slice(1).map((l) => JSON.parse(l));
const runEnd = events[events.length - 1].t;

// Nodes whose latest belief at time t (events at t included) is leader and that are up.
function leadersAt(t) {
  const role = new Map();
  for (const e of events) {
    if (e.t > t) break;
    if (e.ev === 'belief') role.set(e.node, e.role);
    if (e.ev === 'crash') role.delete(e.node);
  }
  return [...role].filter(([, r]) => r === 'leader').map(([n]) => n).sort((a, b) => a - b);
}
// The first moment two nodes believe they lead, for a non-zero time.
function splitBrainStart() {
  const role = new Map();
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (e.ev === 'belief') role.set(e.node, e.role);
    if (e.ev === 'crash') role.delete(e.node);
    const last = i + 1 === events.length || events[i + 1].t > e.t;
    const leaders = [...role.values()].filter((r) => r === 'leader').length;
    if (last && leaders >= 2 && i + 1 < events.length) return e.t;
  }
  return null;
}
// Store requests sent at or before t and applied after it.
function storeRequestsInFlight(t) {
  const applied = new Map();
  for (const e of events) if (e.ev === 'store_apply') applied.set(e.request, e.t);
  return events.filter((e) => e.ev === 'store_request' && e.t <= t && applied.has(e.request) &&
                              applied.get(e.request) > t).length;
}
// The lease the leader key's holder has at t, and when the store last granted or renewed it.
function holderLease(t) {
  let holder = null;
  let lease = 0;
  for (const e of events) {
    if (e.t > t) break;
    if (e.ev === 'store_change' && e.key === header.leader_key) {
      holder = e.change === 'put' ? e.owner : null;
      lease = e.change === 'put' ? e.lease : 0;
    }
  }
  if (holder === null) return null;
  let renewed = null;
  for (const e of events) {
    if (e.t > t) break;
    if (e.ev === 'store_apply' && e.succeeded && e.lease === lease &&
        (e.op === 'lease_grant' || e.op === 'lease_keepalive')) renewed = e.t;
  }
  return { holder, lease, renewed };
}
function parseDuration(text) {
  const m = /^(\d+(?:\.\d+)?)(ns|us|ms|s|m|h)$/.exec(text);
  const unit = { ns: 1, us: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
  return m ? Math.round(Number(m[1]) * unit[m[2]]) : null;
}

// ---- Checks
const results = [];
function check(name, ok, detail) {
  results.push({ name, ok: Boolean(ok) });
  console.log((ok ? 'ok - ' : 'not ok - ') + name + (ok || detail === undefined ? '' : '\n    ' + detail));
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let failedHard = null;
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const requested = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:')) return route.continue();
    requested.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith('file:')) requested.push(r.url()); });

  const started = Date.now();
  await page.goto(pathToFileURL(path.resolve(pagePath)).href);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  console.log('# page ready in ' + (Date.now() - started) + ' ms (' +
      (fs.statSync(pagePath).size / 1e6).toFixed(2) + ' MB, ' + events.length + ' events in the trace)');

  const timeNs = () => page.$eval('#time', (e) => Number(e.dataset.ns));
  const posOf = () => page.$eval('#time', (e) => Number(e.dataset.pos));
  async function seekMs(ms) {
    await page.$eval('#slider', (s, v) => {
      s.value = String(v);
      s.dispatchEvent(new Event('input', { bubbles: true }));
      s.dispatchEvent(new Event('change', { bubbles: true }));
    }, ms);
    await page.waitForFunction((v) => document.getElementById('time').dataset.ns === String(v * 1e6), ms);
  }
  const shownLeaders = () => page.$$eval('[data-node] [data-field="role"]', (roles) => roles
    .filter((r) => r.dataset.belief === 'leader').map((r) => Number(r.closest('[data-node]').dataset.node)));
  const visible = (sel) => page.$$eval(sel, (xs) => xs.filter((x) => !x.hidden && x.offsetParent !== null).length);

  // The leader shown equals the leader in the trace, at several instants.
  const split = splitBrainStart();
  const instants = [500, 3000, 4990, 6000, 8000, 10000, 11500, 20000, Math.floor(runEnd / 1e6) - 1];
  if (split !== null) instants.push(Math.floor(split / 1e6) + 1);
  instants.sort((a, b) => a - b);
  for (const ms of instants) {
    await seekMs(ms);
    const want = leadersAt(ms * 1e6);
    const got = await shownLeaders();
    const header2 = await page.$eval('#leader', (e) => e.dataset.nodes);
    check('at ' + ms + 'ms the page shows leader(s) [' + want + '] as the trace has them',
      JSON.stringify(got) === JSON.stringify(want) && header2 === want.join(','),
      'page: [' + got + '], heading: "' + header2 + '"');
  }

  // The slider seeks: time shown, and the clocks (perfect in this scenario) read true time.
  await seekMs(7777);
  check('the slider seeks to 7.777s', (await timeNs()) === 7777e6 &&
      (await page.$eval('#time', (e) => e.textContent)).startsWith('7.777 000 000'));
  const clocks = await page.$$eval('[data-field="clock"]', (xs) => xs.map((x) => Number(x.dataset.ns)));
  check('each node\'s clock reads its local time (true time here: no skew configured)',
    clocks.length === header.nodes && clocks.every((c) => c === 7777e6), 'clocks: ' + clocks);

  // Store requests in flight, counted from the trace's request ids.
  for (const ms of [7777, 5000, 13000]) {
    await seekMs(ms);
    const want = storeRequestsInFlight(ms * 1e6);
    const got = await page.$$eval('#inflight tr[data-kind="store_request"]', (xs) => xs.length);
    check('at ' + ms + 'ms ' + want + ' store request(s) are in flight, as the trace has it', got === want, 'page: ' + got);
  }

  // The lease countdown of the key's holder: TTL from its last grant or keepalive.
  const scenario = scenarioPath ? JSON.parse(fs.readFileSync(scenarioPath, 'utf8')) : null;
  const ttl = scenario && scenario.protocol && scenario.protocol.ttl ? parseDuration(scenario.protocol.ttl) : null;
  if (ttl !== null) {
    for (const ms of [3000, 4321, 15000]) {
      await seekMs(ms);
      const h = holderLease(ms * 1e6);
      const left = await page.$eval('[data-node="' + (h ? h.holder : 0) + '"] [data-field="lease"]', (e) => e.dataset.leftNs);
      const want = h && h.renewed !== null ? ttl - (ms * 1e6 - h.renewed) : null;
      check('at ' + ms + 'ms the holder\'s lease shows ' + (want === null ? 'nothing' : want / 1e6 + 'ms') + ' left',
        h !== null && Number(left) === want, 'holder ' + (h && h.holder) + ', page: ' + left);
    }
  }

  // Split-brain: absent just before its start, shown (with both leaders) just after.
  if (split !== null) {
    await seekMs(Math.floor(split / 1e6) - 1);
    check('no split-brain finding just before ' + split / 1e9 + 's', (await visible('#findings [data-kind="split-brain"]')) === 0);
    await seekMs(Math.floor(split / 1e6) + 1);
    const nodes = await page.$$eval('#findings [data-kind="split-brain"]', (xs) => xs.filter((x) => !x.hidden).map((x) => x.dataset.nodes));
    const want = leadersAt(split).join(',');
    check('the split-brain finding appears once the replay passes ' + split / 1e9 + 's, naming nodes ' + want,
      nodes.length === 1 && nodes[0] === want, 'page: ' + JSON.stringify(nodes));
    const paused = leadersAt(split).find((n) => events.some((e) => e.ev === 'pause' && e.node === n && e.t <= split));
    if (paused !== undefined) {
      const lease = await page.$eval('[data-node="' + paused + '"] [data-field="lease"]', (e) => e.textContent);
      const role = await page.$eval('[data-node="' + paused + '"] [data-field="role"]', (e) => e.dataset.role);
      check('the frozen leader is shown paused, believing it leads with no lease',
        role === 'paused' && /no lease/.test(lease), 'role ' + role + ', lease "' + lease + '"');
    }
  } else {
    check('the trace has a split-brain to look for', false);
  }

  // Step with "next" to the sink write the sink rejected: the sink panel and the findings say so.
  const stale = events.find((e) => e.ev === 'sink_write' && e.accepted === false);
  check('the trace has a rejected write', stale !== undefined);
  if (stale) {
    await seekMs(Math.floor(stale.t / 1e6) - 50);
    const sel = '#findings [data-kind="stale-write"][data-accepted="false"]';
    check('the rejected write is not among the findings before the replay reaches it', (await visible(sel)) === 0);
    let steps = 0;
    for (; steps < 3000; steps++) {
      const at = await page.$eval('#log .line.current', (e) => ({ kind: e.dataset.kind, t: Number(e.dataset.t) }));
      if (at.kind === 'sink_write' && at.t === stale.t) break;
      const before = await posOf();
      await page.click('#next');
      await page.waitForFunction((p) => Number(document.getElementById('time').dataset.pos) > p, before);
    }
    const sink = await page.$eval('#sink [data-field="last-write"]', (e) => ({ accepted: e.dataset.accepted, text: e.textContent }));
    check('after ' + steps + ' "next" clicks the sink panel shows node ' + stale.writer + '\'s write rejected',
      steps > 1 && sink.accepted === 'false' && /rejected/.test(sink.text) && sink.text.includes('node ' + stale.writer) &&
      (await timeNs()) === stale.t, JSON.stringify(sink));
    check('the findings now list the rejected stale write', (await visible(sel)) === 1);
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(() => !document.querySelector('#log .line.current[data-kind="sink_write"]') ||
        document.querySelector('#sink [data-field="last-write"]').dataset.accepted !== 'false');
    check('the left arrow steps back before it: the finding is gone again', (await visible(sel)) === 0);
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction((s) => (document.querySelector(s) || {}).hidden === false, sel);
    check('the right arrow steps onto it again', (await visible(sel)) === 1);
  }

  // Play advances time; pausing stops it.
  await seekMs(1000);
  await page.selectOption('#speed', '5');
  const before = await timeNs();
  await page.click('#play');
  await page.waitForFunction((b) => Number(document.getElementById('time').dataset.ns) > b + 2e8, before, { timeout: 10000 });
  await page.click('#play');
  const frames = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await frames();
  const paused1 = await timeNs();
  await page.waitForTimeout(300);
  const paused2 = await timeNs();
  check('play advances time (' + (paused1 - before) / 1e9 + 's of run time) and pause stops it',
    paused1 > before && paused2 === paused1, 'from ' + before + ' to ' + paused1 + ', then ' + paused2);
  await page.keyboard.press(' ');
  await page.waitForFunction((b) => Number(document.getElementById('time').dataset.ns) > b, paused2, { timeout: 10000 });
  await page.keyboard.press(' ');
  check('the space bar plays too', (await timeNs()) > paused2);

  // The cursor follows the time over the timeline picture, and a click there seeks.
  const hasSvg = (await page.$('#timeline-wrap svg')) !== null;
  check('the page embeds the timeline picture', hasSvg);
  if (hasSvg) {
    await seekMs(5000);
    const x1 = await page.$eval('#cursor', (c) => c.getBoundingClientRect().left);
    await seekMs(20000);
    const x2 = await page.$eval('#cursor', (c) => c.getBoundingClientRect().left);
    check('the cursor moves right as time goes on', x2 > x1 + 50, x1 + ' -> ' + x2);
    // Click where 12.5s is drawn, by the picture's own time axis.
    await page.$eval('#timeline-wrap svg', (svg) => svg.scrollIntoView({ block: 'center' }));
    const target = await page.$eval('#timeline-wrap svg', (svg) => {
      const vb = svg.viewBox.baseVal;
      const r = svg.getBoundingClientRect();
      const left = Number(svg.getAttribute('data-time-left'));
      const right = Number(svg.getAttribute('data-time-right'));
      const domain = Number(svg.getAttribute('data-time-domain-ns'));
      const xu = left + (12.5e9 / domain) * (right - left);
      return { x: r.left + (xu - vb.x) * (r.width / vb.width), y: r.top + r.height / 2, nsPerPx: domain / ((right - left) * r.width / vb.width) };
    });
    await page.mouse.click(target.x, target.y);
    await page.waitForFunction(() => Math.abs(Number(document.getElementById('time').dataset.ns) - 12.5e9) < 1e9);
    const t = await timeNs();
    check('a click on the timeline at 12.5s seeks there (to ' + t / 1e9 + 's)', Math.abs(t - 12.5e9) <= 2 * target.nsPerPx);
  }

  check('no network request was attempted', requested.length === 0, requested.join(', '));
  check('no console errors', errors.length === 0, errors.join('\n    '));

  // A picture for people: the moment fencing stops the stale write.
  if (stale) await seekMs(Math.floor(stale.t / 1e6));
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: shotPath, fullPage: true });
  console.log('# screenshot: ' + shotPath);
} catch (e) {
  failedHard = e;
  check('the test ran to its end', false, String(e && e.stack ? e.stack : e));
} finally {
  await browser.close();
}

const failed = results.filter((r) => !r.ok).length;
console.log((results.length - failed) + ' passed, ' + failed + ' failed');
process.exit(failed || failedHard ? 1 : 0);
