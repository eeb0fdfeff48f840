#!/usr/bin/python3
# How fast the playground simulates in headless Chromium: writes a page offering an hour of a
# 5-node lease world and of a 5-node Raft world (latency uniform 1-10 ms, a write every 100 ms),
# opens each, and prints what the page measured: simulated time over the wall time of the
# module's slices (the page's own "simulated at N x real time"), and how long until the run was
# shown. A measurement, not a test: it asserts nothing.
# Usage: /usr/bin/python3 tests/browser/measure_playground.py ELECTSIM [ROUNDS]
import json
import os
import subprocess
import sys
import tempfile
import time

import chromium

electsim = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
work = tempfile.mkdtemp(prefix='electsim-measure-')
worlds = {
    'lease-5-1h': {'name': 'lease', 'ttl': '2s'},
    'raft-5-1h': {'name': 'raft'},
}
files = []
for name, protocol in worlds.items():
    path = os.path.join(work, name + '.json')
    with open(path, 'w') as f:
        json.dump({'name': name, 'description': 'An hour of five nodes, for measuring.',
                   'seed': 1, 'duration': '1h', 'nodes': 5, 'protocol': protocol,
                   'network': {'latency': {'dist': 'uniform', 'min': '1ms', 'max': '10ms',
                                           'step': '1ms'}},
                   'workload': {'interval': '100ms', 'work': '5ms'}}, f)
    files.append(path)
page = os.path.join(work, 'measure.html')
subprocess.run([electsim, 'play', *files, '-o', page], check=True, capture_output=True)
driver = chromium.start()
try:
    for name in worlds:
        for r in range(rounds):
            driver.get('about:blank')
            started = time.monotonic()
            driver.get('file://' + page + '#scenario=' + name)
            chromium.wait_for(driver, 'return document.body.dataset.ready === "1" && '
                              'window.electsimPlayground.ready()', timeout=300)
            shown = time.monotonic() - started
            s = driver.execute_script('return window.electsimPlayground.state()')
            speed = s['simulated_ns'] / 1e6 / max(s['wall_ms'], 1e-9)
            print('%-11s round %d: simulated %.0f s in %.2f s of slices: %.0f x real time; '
                  'shown %.1f s after opening' % (name, r + 1, s['simulated_ns'] / 1e9,
                                                  s['wall_ms'] / 1000, speed, shown))
finally:
    driver.quit()
