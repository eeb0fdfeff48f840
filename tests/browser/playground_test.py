#!/usr/bin/python3
# The playground end to end in headless Chromium (Debian's python3-selenium through
# /usr/bin/chromedriver), the page opened from disk with the network out of reach:
#   - the GC-pause experiment: the student finds the holder, clicks its card, pauses it for 6 s
#     and plays on; the sink must reject the stale write the holder sends when it wakes;
#   - "Save as scenario" downloads a file that the native electsim runs to the page's trace hash;
#   - a trace loaded from disk is drawn, with the native run's hash, and refuses changes;
#   - three shipped scenarios give, in the page, the native build's trace hashes;
#   - nothing is fetched and nothing is logged as an error on the console.
# Usage: /usr/bin/python3 playground_test.py PAGE.html ELECTSIM SCENARIOS_DIR OUTDIR
import glob
import os
import re
import subprocess
import sys
import time
import traceback

import chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

if len(sys.argv) != 5:
    print('usage: /usr/bin/python3 playground_test.py PAGE.html ELECTSIM SCENARIOS_DIR OUTDIR',
          file=sys.stderr)
    sys.exit(2)
page_path, electsim, scenarios_dir, out_dir = sys.argv[1:5]
page_url = 'file://' + os.path.abspath(page_path)
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print('FAIL: ' + what)


def native_hash(path, *args):
    run = subprocess.run([electsim, 'run', path, *args], capture_output=True, text=True)
    match = re.search(r'^trace hash ([0-9a-f]{16})$', run.stdout, re.M)
    if run.returncode not in (0, 1) or not match:
        failures.append('electsim run %s failed: %s' % (path, run.stderr.strip()))
        return None
    return match.group(1)


def wait_ready(driver, runs_before=None):
    """Waits until the module has run the scenario to its end and the replay page shows it."""
    chromium.wait_for(driver, 'return document.body.dataset.ready === "1"', timeout=60)
    if runs_before is not None:
        chromium.wait_for(driver, 'return Number(document.body.dataset.runs || 0) > arguments[0]',
                          runs_before, timeout=60)
    chromium.wait_for(driver, 'return window.electsimPlayground.ready()', timeout=60)
    chromium.wait_for(driver, '''const f = document.querySelector("#views iframe:not(.loading)");
        return f && f.contentWindow.electsimReplay !== undefined;''', timeout=60)


def runs(driver):
    return int(driver.execute_script('return Number(document.body.dataset.runs || 0)'))


def in_view(driver, script, *args):
    """Runs a script in the embedded replay page's document."""
    frame = driver.find_element(By.CSS_SELECTOR, '#views iframe:not(.loading)')
    driver.switch_to.frame(frame)
    try:
        return driver.execute_script(script, *args)
    finally:
        driver.switch_to.default_content()


driver = chromium.start(capture_logs=True)
try:
    os.makedirs(out_dir, exist_ok=True)
    for old in glob.glob(os.path.join(out_dir, '*-played.json')):
        os.remove(old)
    driver.execute_cdp_cmd('Browser.setDownloadBehavior',
                           {'behavior': 'allow', 'downloadPath': os.path.abspath(out_dir)})

    # ---- The GC-pause experiment, played as a student would.
    driver.get(page_url + '#experiment=gc-pause-and-fence')
    wait_ready(driver)
    check(driver.execute_script('return document.getElementById("guide").hidden') is False,
          'the experiment shows its guide')
    check(driver.find_element(By.ID, 'reveal').get_attribute('disabled') is not None,
          'the answer waits until the student has played')
    # Play at 10x for a moment, then pause: the holder leads by then.
    Select(driver.find_element(By.ID, 'speed')).select_by_value('10')
    driver.find_element(By.ID, 'play').click()
    chromium.wait_for(driver, 'return window.electsimPlayground.state().t > 2.5e9', timeout=30)
    driver.find_element(By.ID, 'play').click()
    t_pause = driver.execute_script('return window.electsimPlayground.state().t')
    leaders = in_view(driver, 'return document.getElementById("leader").dataset.nodes')
    check(leaders is not None and re.fullmatch(r'[0-9]+', leaders or ''),
          'one node leads before the pause (found %r)' % leaders)
    holder = int(leaders) if leaders and re.fullmatch(r'[0-9]+', leaders) else 0
    # The student clicks the holder's card in the replay, then Pause for 6 s.
    frame = driver.find_element(By.CSS_SELECTOR, '#views iframe:not(.loading)')
    driver.switch_to.frame(frame)
    driver.find_element(By.CSS_SELECTOR, '.node[data-node="%d"]' % holder).click()
    driver.switch_to.default_content()
    chromium.wait_for(driver, '''return document.querySelector(
        '#node-chips .chip.selected[data-target="' + arguments[0] + '"]') !== null''', str(holder))
    duration = driver.find_element(By.ID, 'duration')
    duration.clear()
    duration.send_keys('6s')
    before = runs(driver)
    driver.find_element(By.CSS_SELECTOR, '[data-act="pause"]').click()
    wait_ready(driver, before)
    state = driver.execute_script('return window.electsimPlayground.state()')
    check(state['actions'] == [{'at': '%.3fs' % (int(t_pause // 1000000) / 1000), 'kind': 'pause',
                                'target': holder, 'duration': '6s'}],
          'the click is recorded as a pause fault at its true time (%s)' % state['actions'])
    check(abs(state['t'] - t_pause) < 1e6, 'the moment shown stays where the student acted')
    # Play on to the end at 100x.
    Select(driver.find_element(By.ID, 'speed')).select_by_value('100')
    driver.find_element(By.ID, 'play').click()
    chromium.wait_for(driver, 'const s = window.electsimPlayground.state(); return s.t >= s.end',
                      timeout=60)
    sink = in_view(driver, '''const q = (f) => document.querySelector(
        '#sink [data-field="' + f + '"]').textContent;
        const n = (f) => q(f).split(/[^0-9]/)[0];
        return {rejected: n('stale-rejected'), accepted: n('stale-accepted'),
                overwrites: n('overwrites')};''')
    check(sink['rejected'] == '1' and sink['accepted'] == '0' and sink['overwrites'] == '0',
          'the sink rejects the woken holder\'s stale write and accepts none (%s)' % sink)
    finding = in_view(driver, '''const f = [...document.querySelectorAll('#findings .finding')]
        .filter((x) => !x.hidden && x.dataset.kind === 'stale-write');
        return f.length ? f[0].dataset.accepted + ':' + f[0].dataset.writer : '';''')
    check(finding == 'false:%d' % holder,
          'the findings name the rejected stale write of node %d (%r)' % (holder, finding))
    check(driver.find_element(By.ID, 'reveal').get_attribute('disabled') is None,
          'played to the end, the answer can be shown')
    driver.find_element(By.ID, 'reveal').click()
    check(driver.find_element(By.ID, 'guide-answer').is_displayed(), 'the answer is shown')
    page_hash = driver.execute_script('return window.electsimPlayground.state().hash')
    driver.save_screenshot(os.path.join(out_dir, 'playground.png'))

    # ---- Save as scenario: the native electsim replays it to the page's hash.
    driver.find_element(By.ID, 'save').click()
    deadline = time.time() + 20
    saved = []
    while time.time() < deadline and not saved:
        saved = [p for p in glob.glob(os.path.join(out_dir, '*-played.json'))]
        time.sleep(0.1)
    check(len(saved) == 1, 'the page downloads one scenario file (%s)' % saved)
    if saved:
        check(native_hash(saved[0]) == page_hash,
              'electsim run of the saved file gives the page\'s trace hash %s' % page_hash)

    # ---- Load a trace: drawn as its run drew it (drifting clocks), watched but not changed.
    trace = os.path.join(out_dir, 'lease-clock-drift.jsonl')
    want = native_hash(os.path.join(scenarios_dir, 'lease-clock-drift.json'), '--trace', trace)
    before = runs(driver)
    driver.execute_script('document.getElementById("file").hidden = false')
    driver.find_element(By.ID, 'file').send_keys(os.path.abspath(trace))
    wait_ready(driver, before)
    got = driver.execute_script('return window.electsimPlayground.state().hash')
    check(got == want, 'a loaded trace shows its hash %s (the native run\'s %s)' % (got, want))
    banner = in_view(driver, 'return document.getElementById("verdict").textContent')
    check(banner.startswith('Not judged'), 'a trace alone is not judged PASS (%r)' % banner)
    driver.find_element(By.CSS_SELECTOR, '[data-act="crash"]').click()
    said = driver.find_element(By.ID, 'problems').get_attribute('textContent')
    check('finished run' in said, 'a click on a loaded trace is refused, saying why (%r)' % said)

    # ---- Shipped scenarios: the page's hashes are the native build's.
    for name in ['lease-leader-crash', 'raft-split-votes', 'zookeeper-no-herd']:
        before = runs(driver)
        driver.get(page_url + '#scenario=' + name)
        wait_ready(driver)
        got = driver.execute_script('return window.electsimPlayground.state().hash')
        want = native_hash(os.path.join(scenarios_dir, name + '.json'))
        check(got == want, '%s: the page\'s trace hash %s is the native %s' % (name, got, want))

    # ---- Nothing fetched, nothing logged as an error.
    errors = [e for e in driver.get_log('browser') if e['level'] == 'SEVERE']
    check(not errors, 'no console errors (%s)' % errors)
    requests = [e for e in driver.get_log('performance')
                if '"Network.requestWillBeSent"' in e['message'] and 'file://' not in e['message']
                and 'data:' not in e['message'] and 'blob:' not in e['message']
                and 'about:srcdoc' not in e['message']]
    check(not requests, 'the page fetches nothing (%d requests)' % len(requests))
except Exception:
    traceback.print_exc()
    failures.append('the test stopped on an exception')
finally:
    driver.quit()

if failures:
    print('playground test: %d failure(s)' % len(failures))
    sys.exit(1)
print('playground test: the GC-pause experiment, the saved scenario, a loaded trace and three '
      'shipped scenarios pass')
