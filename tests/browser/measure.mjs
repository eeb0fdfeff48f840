// Measures a replay page in headless Chromium: file size, time until the page is ready (data
// parsed, snapshots built, first state drawn), and the cost of seeks to random instants and of
// single steps. Not a test: it prints figures for the documentation.
// Usage: node measure.mjs PAGE.html [SEEKS]
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const [pagePath, seeksArg] = process.argv.slice(2);
const seeks = Number(seeksArg || 200);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.route('**/*', (r) => (r.request().url().startsWith('file:') ? r.continue() : r.abort()));
  const started = Date.now();
  await page.goto(pathToFileURL(path.resolve(pagePath)).href, { timeout: 300000 });
  await page.waitForSelector('body[data-ready="1"]', { timeout: 300000 });
  const readyMs = Date.now() - started;
  const figures = await page.evaluate((count) => {
    const r = window.electsimReplay;
    // A fixed pseudo-random sequence of instants, so that runs compare.
    let x = 12345;
    const next = () => { x = (x * 1103515245 + 12345) % 2147483648; return x / 2147483648; };
    const seek = [];
    for (let i = 0; i < count; i++) {
      const t = Math.floor(next() * r.end);
      const t0 = performance.now();
      r.seekTime(t);
      seek.push(performance.now() - t0);
    }
    const step = [];
    let p = r.seekTime(Math.floor(r.end / 2));
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      r.seekPos(++p);
      step.push(performance.now() - t0);
    }
    const stats = (xs) => {
      const s = xs.slice().sort((a, b) => a - b);
      const q = (f) => s[Math.min(s.length - 1, Math.floor(f * s.length))];
      return { median: q(0.5).toFixed(2), p95: q(0.95).toFixed(2), max: s[s.length - 1].toFixed(2) };
    };
    const heap = performance.memory ? (performance.memory.usedJSHeapSize / 1e6).toFixed(0) + ' MB' : 'n/a';
    return { events: r.events, indexMs: document.body.dataset.indexMs, seek: stats(seek), step: stats(step), heap };
  }, seeks);
  console.log(JSON.stringify({
    file_mb: (fs.statSync(pagePath).size / 1e6).toFixed(1),
    ready_ms: readyMs,
    ...figures,
  }, null, 1));
} finally {
  await browser.close();
}
