#!/usr/bin/python3
# Measures a replay page in headless Chromium: file size, time until the page is ready (data
# parsed, snapshots built, first state drawn), and the cost of seeks to random instants and of
# single steps. Not a test: it prints figures for the documentation.
# Usage: /usr/bin/python3 measure.py PAGE.html [SEEKS]
import json
import os
import sys
import time
from pathlib import Path

import chromium
from selenium.webdriver.support.ui import WebDriverWait

if len(sys.argv) < 2:
    print('usage: /usr/bin/python3 measure.py PAGE.html [SEEKS]', file=sys.stderr)
    sys.exit(2)
page_path = sys.argv[1]
seeks = int(sys.argv[2]) if len(sys.argv) > 2 else 200


driver = chromium.start()
try:
    driver.set_page_load_timeout(300)
    driver.set_script_timeout(300)
    started = time.monotonic()
    driver.get(Path(page_path).resolve().as_uri())
    WebDriverWait(driver, 300, poll_frequency=0.02).until(
        lambda d: d.execute_script('return document.body && document.body.dataset.ready === "1"'))
    ready_ms = round((time.monotonic() - started) * 1000)
    figures = driver.execute_script('''
        const count = arguments[0];
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
          return { median: q(0.5).toFixed(2), p95: q(0.95).toFixed(2),
                   max: s[s.length - 1].toFixed(2) };
        };
        const heap = performance.memory
          ? (performance.memory.usedJSHeapSize / 1e6).toFixed(0) + ' MB' : 'n/a';
        return { events: r.events, indexMs: document.body.dataset.indexMs, seek: stats(seek),
                 step: stats(step), heap };''', seeks)
    # In the page's order (the driver hands objects back with their keys sorted); a figure the page
    # leaves out is left out here too.
    for k in ['seek', 'step']:
        figures[k] = {q: figures[k][q] for q in ['median', 'p95', 'max']}
    out = {'file_mb': '%.1f' % (os.path.getsize(page_path) / 1e6), 'ready_ms': ready_ms}
    out.update((k, figures[k]) for k in ['events', 'indexMs', 'seek', 'step', 'heap']
               if figures.get(k) is not None)
    print(json.dumps(out, indent=1))
finally:
    driver.quit()
