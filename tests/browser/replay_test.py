#!/usr/bin/python3
# End-to-end test of the replay report in headless Chromium (Debian's python3-selenium driving
# /usr/bin/chromium through /usr/bin/chromedriver): the page, opened from disk with the network
# out of reach, must show the run as its trace has it. The trace is parsed here, independently of
# the page.
# Usage: /usr/bin/python3 replay_test.py PAGE.html TRACE.jsonl SCREENSHOT.png [SCENARIO.json]
import base64
import json
import math
import os
import re
import sys
import time
import traceback
from pathlib import Path

import chromium
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

if len(sys.argv) < 4:
    print('usage: /usr/bin/python3 replay_test.py PAGE.html TRACE.jsonl SCREENSHOT.png '
          '[SCENARIO.json]', file=sys.stderr)
    sys.exit(2)
page_path, trace_path, shot_path = sys.argv[1:4]
scenario_path = sys.argv[4] if len(sys.argv) > 4 else None

# ---- The trace, read independently of the page
with open(trace_path, encoding='utf-8') as f:
    lines = [line for line in f.read().split('\n') if line.strip() != '']
header = json.loads(lines[0])
events = [json.loads(line) for line in lines[1:]]
run_end = events[-1]['t']


def leaders_at(t):
    """Nodes whose latest belief at time t (events at t included) is leader and that are up."""
    role = {}
    for e in events:
        if e['t'] > t:
            break
        if e['ev'] == 'belief':
            role[e['node']] = e['role']
        if e['ev'] == 'crash':
            role.pop(e['node'], None)
    return sorted(n for n, r in role.items() if r == 'leader')


def split_brain_start():
    """The first moment two nodes believe they lead, for a non-zero time."""
    role = {}
    for i, e in enumerate(events):
        if e['ev'] == 'belief':
            role[e['node']] = e['role']
        if e['ev'] == 'crash':
            role.pop(e['node'], None)
        last = i + 1 == len(events) or events[i + 1]['t'] > e['t']
        leaders = sum(1 for r in role.values() if r == 'leader')
        if last and leaders >= 2 and i + 1 < len(events):
            return e['t']
    return None


def store_requests_in_flight(t):
    """Store requests sent at or before t and applied after it."""
    applied = {e['request']: e['t'] for e in events if e['ev'] == 'store_apply'}
    return sum(1 for e in events if e['ev'] == 'store_request' and e['t'] <= t and
               e['request'] in applied and applied[e['request']] > t)


def holder_lease(t):
    """The lease the leader key's holder has at t, and when the store last granted or renewed it."""
    holder, lease = None, 0
    for e in events:
        if e['t'] > t:
            break
        if e['ev'] == 'store_change' and e['key'] == header['leader_key']:
            holder = e['owner'] if e['change'] == 'put' else None
            lease = e['lease'] if e['change'] == 'put' else 0
    if holder is None:
        return None
    renewed = None
    for e in events:
        if e['t'] > t:
            break
        if (e['ev'] == 'store_apply' and e['succeeded'] and e['lease'] == lease and
                e['op'] in ('lease_grant', 'lease_keepalive')):
            renewed = e['t']
    return {'holder': holder, 'lease': lease, 'renewed': renewed}


def parse_duration(text):
    m = re.fullmatch(r'(\d+(?:\.\d+)?)(ns|us|ms|s|m|h)', text)
    unit = {'ns': 1, 'us': 1e3, 'ms': 1e6, 's': 1e9, 'm': 60e9, 'h': 3600e9}
    return math.floor(float(m.group(1)) * unit[m.group(2)] + 0.5) if m else None


def num(x):
    """A number as JavaScript prints it: 12 rather than 12.0."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def as_number(text):
    """A data attribute read as a number; None when it is missing or not one."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def ids(xs):
    return ','.join(str(x) for x in xs)


# ---- Checks
results = []


def check(name, ok, detail=None):
    results.append(bool(ok))
    print(('ok - ' if ok else 'not ok - ') + name +
          ('' if ok or detail is None else '\n    ' + str(detail)), flush=True)



driver = None
failed_hard = False
try:
    driver = chromium.start(capture_logs=True)
    driver.set_page_load_timeout(60)
    js = driver.execute_script

    def wait_for(script, *args, timeout=30):
        chromium.wait_for(driver, script, *args, timeout=timeout)

    started = time.monotonic()
    driver.get(Path(page_path).resolve().as_uri())
    wait_for('return document.body && document.body.dataset.ready === "1"', timeout=60)
    print('# page ready in %d ms (%.2f MB, %d events in the trace)' % (
        (time.monotonic() - started) * 1000, os.path.getsize(page_path) / 1e6, len(events)))

    TIME_NS = 'Number(document.getElementById("time").dataset.ns)'
    TIME_POS = 'Number(document.getElementById("time").dataset.pos)'

    def time_ns():
        return js('return ' + TIME_NS)

    def pos_of():
        return js('return ' + TIME_POS)

    def seek_ms(ms):
        chromium.seek_ms(driver, ms)

    def shown_leaders():
        return js('''return [...document.querySelectorAll('[data-node] [data-field="role"]')]
            .filter((r) => r.dataset.belief === "leader")
            .map((r) => Number(r.closest("[data-node]").dataset.node));''')

    def visible(sel):
        return js('''return [...document.querySelectorAll(arguments[0])]
            .filter((x) => !x.hidden && x.offsetParent !== null).length;''', sel)

    def node_field(node, field):
        """A field of a node's panel: its element's dataset and text."""
        return js('''const e = document.querySelector(
                       '[data-node="' + arguments[0] + '"] [data-field="' + arguments[1] + '"]');
                     return { data: { ...e.dataset }, text: e.textContent };''', node, field)

    def key(k):
        """Presses a key on whatever has the focus, as a person would."""
        ActionChains(driver).send_keys(k).perform()

    # The leader shown equals the leader in the trace, at several instants.
    split = split_brain_start()
    instants = [500, 3000, 4990, 6000, 8000, 10000, 11500, 20000, run_end // 1000000 - 1]
    if split is not None:
        instants.append(split // 1000000 + 1)
    instants.sort()
    for ms in instants:
        seek_ms(ms)
        want = leaders_at(ms * 1000000)
        got = shown_leaders()
        heading = js('return document.getElementById("leader").dataset.nodes')
        check('at %dms the page shows leader(s) [%s] as the trace has them' % (ms, ids(want)),
              got == want and heading == ids(want),
              'page: [%s], heading: "%s"' % (ids(got), heading))

    # The slider seeks: time shown, and the clocks (perfect in this scenario) read true time.
    seek_ms(7777)
    check('the slider seeks to 7.777s', time_ns() == 7777000000 and
          js('return document.getElementById("time").textContent').startswith('7.777 000 000'))
    clocks = js('''return [...document.querySelectorAll('[data-field="clock"]')]
        .map((x) => Number(x.dataset.ns));''')
    check('each node\'s clock reads its local time (true time here: no skew configured)',
          len(clocks) == header['nodes'] and all(c == 7777000000 for c in clocks),
          'clocks: ' + ids(clocks))

    # Store requests in flight, counted from the trace's request ids.
    for ms in [7777, 5000, 13000]:
        seek_ms(ms)
        want = store_requests_in_flight(ms * 1000000)
        got = js('return document.querySelectorAll(arguments[0]).length',
                 '#inflight tr[data-kind="store_request"]')
        check('at %dms %d store request(s) are in flight, as the trace has it' % (ms, want),
              got == want, 'page: %d' % got)

    # The lease countdown of the key's holder: TTL from its last grant or keepalive.
    scenario = None
    if scenario_path:
        with open(scenario_path, encoding='utf-8') as f:
            scenario = json.load(f)
    ttl = None
    if scenario and scenario.get('protocol') and scenario['protocol'].get('ttl'):
        ttl = parse_duration(scenario['protocol']['ttl'])
    if ttl is not None:
        for ms in [3000, 4321, 15000]:
            seek_ms(ms)
            h = holder_lease(ms * 1000000)
            left = node_field(h['holder'] if h else 0, 'lease')['data'].get('leftNs')
            want = ttl - (ms * 1000000 - h['renewed']) if h and h['renewed'] is not None else None
            check('at %dms the holder\'s lease shows %s left'
                  % (ms, 'nothing' if want is None else num(want / 1e6) + 'ms'),
                  h is not None and want is not None and as_number(left) == want,
                  'holder %s, page: %s' % (h and h['holder'], left))

    # Split-brain: absent just before its start, shown (with both leaders) just after.
    if split is not None:
        seek_ms(split // 1000000 - 1)
        check('no split-brain finding just before %ss' % num(split / 1e9),
              visible('#findings [data-kind="split-brain"]') == 0)
        seek_ms(split // 1000000 + 1)
        nodes = js('''return [...document.querySelectorAll('#findings [data-kind="split-brain"]')]
            .filter((x) => !x.hidden).map((x) => x.dataset.nodes);''')
        want = ids(leaders_at(split))
        check('the split-brain finding appears once the replay passes %ss, naming nodes %s'
              % (num(split / 1e9), want),
              len(nodes) == 1 and nodes[0] == want,
              'page: ' + json.dumps(nodes, separators=(',', ':')))
        paused = next((n for n in leaders_at(split) if any(
            e['ev'] == 'pause' and e['node'] == n and e['t'] <= split for e in events)), None)
        if paused is not None:
            lease = node_field(paused, 'lease')['text']
            role = node_field(paused, 'role')['data'].get('role')
            check('the frozen leader is shown paused, believing it leads with no lease',
                  role == 'paused' and 'no lease' in lease, 'role %s, lease "%s"' % (role, lease))
        # Findings are links to their moment: from later in the run, a click on the split-brain
        # finding seeks back to where it began.
        seek_ms(20000)
        js('document.querySelector(\'#findings [data-kind="split-brain"]\').click();')
        wait_for('return document.getElementById("time").dataset.ns === arguments[0]', str(split))
        check('a click on the split-brain finding seeks back to %ss' % num(split / 1e9),
              time_ns() == split)
        # The line of findings still to come jumps to the next one.
        seek_ms(1000)
        first_after = js("""return Math.min(...[...document.querySelectorAll('#findings .finding')]
            .map((x) => Number(x.dataset.at)).filter((t) => t > 1e9));""")
        js('document.querySelector("#findings .later").click();')
        wait_for('return Number(document.getElementById("time").dataset.ns) === arguments[0]',
                 first_after)
        check('"more findings later" jumps to the first finding after the cursor (%ss)'
              % num(first_after / 1e9), time_ns() == first_after)
    else:
        check('the trace has a split-brain to look for', False)

    # Step with "next" to the sink write the sink rejected: the sink panel and the findings say so.
    stale = next((e for e in events if e['ev'] == 'sink_write' and e.get('accepted') is False),
                 None)
    check('the trace has a rejected write', stale is not None)
    if stale:
        seek_ms(stale['t'] // 1000000 - 50)
        sel = '#findings [data-kind="stale-write"][data-accepted="false"]'
        check('the rejected write is not among the findings before the replay reaches it',
              visible(sel) == 0)
        next_button = driver.find_element(By.ID, 'next')
        steps = 0
        while steps < 3000:
            at = js('''const e = document.querySelector("#log .line.current");
                       return { kind: e.dataset.kind, t: Number(e.dataset.t) };''')
            if at['kind'] == 'sink_write' and at['t'] == stale['t']:
                break
            before = pos_of()
            next_button.click()
            wait_for('return %s > arguments[0]' % TIME_POS, before)
            steps += 1
        sink = js('''const e = document.querySelector('#sink [data-field="last-write"]');
                     return { accepted: e.dataset.accepted, text: e.textContent };''')
        check('after %d "next" clicks the sink panel shows node %s\'s write rejected'
              % (steps, stale['writer']),
              steps > 1 and sink['accepted'] == 'false' and 'rejected' in sink['text'] and
              ('node %s' % stale['writer']) in sink['text'] and time_ns() == stale['t'],
              json.dumps(sink, separators=(',', ':')))
        check('the findings now list the rejected stale write', visible(sel) == 1)
        # When the write was decided: the moment its writer committed it, before the pause.
        sent = next((e for e in events if e['ev'] == 'sink_send' and
                     e['writer'] == stale['writer'] and e['payload'] == stale['payload']), None)
        check('the trace says when the rejected write was committed', sent is not None)
        if sent:
            want = '%.3fs' % (sent['t'] / 1e9)
            line = js('return document.querySelector("#log .line.current").textContent;')
            check('its log line says its writer committed it at %s' % want,
                  ('committed at ' + want) in line, line)
            finding = js('return document.querySelector(arguments[0]).textContent;', sel)
            check('and so does its finding', ('committed the write at ' + want) in finding,
                  finding)
        key(Keys.ARROW_LEFT)
        wait_for('''return !document.querySelector('#log .line.current[data-kind="sink_write"]') ||
                    document.querySelector('#sink [data-field="last-write"]').dataset.accepted
                      !== "false";''')
        check('the left arrow steps back before it: the finding is gone again', visible(sel) == 0)
        key(Keys.ARROW_RIGHT)
        wait_for('return (document.querySelector(arguments[0]) || {}).hidden === false', sel)
        check('the right arrow steps onto it again', visible(sel) == 1)

    # Play advances time; pausing stops it.
    seek_ms(1000)
    Select(driver.find_element(By.ID, 'speed')).select_by_value('5')
    before = time_ns()
    play = driver.find_element(By.ID, 'play')
    play.click()
    wait_for('return %s > arguments[0] + 2e8' % TIME_NS, before, timeout=10)
    play.click()
    # Two animation frames: whatever the last frame of play drew is drawn.
    driver.execute_async_script('const done = arguments[arguments.length - 1];'
                                'requestAnimationFrame(() => requestAnimationFrame(() => done()));')
    paused1 = time_ns()
    time.sleep(0.3)
    paused2 = time_ns()
    check('play advances time (%ss of run time) and pause stops it' % num((paused1 - before) / 1e9),
          paused1 > before and paused2 == paused1,
          'from %d to %d, then %d' % (before, paused1, paused2))
    key(Keys.SPACE)
    wait_for('return %s > arguments[0]' % TIME_NS, paused2, timeout=10)
    key(Keys.SPACE)
    check('the space bar plays too', time_ns() > paused2)

    # The cursor follows the time over the timeline picture, and a click there seeks.
    has_svg = len(driver.find_elements(By.CSS_SELECTOR, '#timeline-wrap svg')) > 0
    check('the page embeds the timeline picture', has_svg)
    if has_svg:
        cursor_left = 'return document.getElementById("cursor").getBoundingClientRect().left'
        seek_ms(5000)
        x1 = js(cursor_left)
        seek_ms(20000)
        x2 = js(cursor_left)
        check('the cursor moves right as time goes on', x2 > x1 + 50,
              '%s -> %s' % (num(x1), num(x2)))
        # Click where 12.5s is drawn, by the picture's own time axis.
        target = js('''const svg = document.querySelector("#timeline-wrap svg");
            svg.scrollIntoView({ block: "center" });
            const vb = svg.viewBox.baseVal;
            const r = svg.getBoundingClientRect();
            const left = Number(svg.getAttribute("data-time-left"));
            const right = Number(svg.getAttribute("data-time-right"));
            const domain = Number(svg.getAttribute("data-time-domain-ns"));
            const xu = left + (12.5e9 / domain) * (right - left);
            return { x: r.left + (xu - vb.x) * (r.width / vb.width), y: r.top + r.height / 2,
                     nsPerPx: domain / ((right - left) * r.width / vb.width) };''')
        click = ActionBuilder(driver)
        click.pointer_action.move_to_location(round(target['x']), round(target['y'])).click()
        click.perform()
        wait_for('return Math.abs(%s - 12.5e9) < 1e9' % TIME_NS)
        t = time_ns()
        check('a click on the timeline at 12.5s seeks there (to %ss)' % num(t / 1e9),
              abs(t - 12.5e9) <= 2 * target['nsPerPx'])

    # Every request the page made, from the performance log; only the page's own file may be read.
    requested = []
    for entry in driver.get_log('performance'):
        message = json.loads(entry['message'])['message']
        if message['method'] == 'Network.requestWillBeSent':
            url = message['params']['request']['url']
            if not url.startswith('file:'):
                requested.append(url)
    check('no network request was attempted', len(requested) == 0, ', '.join(requested))
    errors = [e['message'] for e in driver.get_log('browser') if e['level'] == 'SEVERE']
    check('no console errors', len(errors) == 0, '\n    '.join(errors))

    # A link into a moment: the page opens at the time and the node its URL names, as a lab
    # sheet's link does, and follows a new one.
    moment_ns = 10970000000
    driver.get(Path(page_path).resolve().as_uri() + '#t=10.970&node=4')
    wait_for('return document.body.dataset.ready === "1" && ' + TIME_NS + ' === arguments[0]',
             moment_ns)
    check('#t=10.970 opens the page at 10.970 s', time_ns() == moment_ns, str(time_ns()))
    check('#node=4 picks out node 4', js('''return [...document.querySelectorAll(".node.selected")]
        .map((c) => c.dataset.node).join(",")''') == '4')
    js('location.hash = "#event=3"')
    wait_for('return document.getElementById("time").dataset.pos === "2"')
    check('#event=3 moves to the third event', pos_of() == 2, str(pos_of()))

    # A picture for people: the moment fencing stops the stale write.
    if stale:
        seek_ms(stale['t'] // 1000000)
    js('window.scrollTo(0, 0)')
    size = driver.execute_cdp_cmd('Page.getLayoutMetrics', {})['cssContentSize']
    shot = driver.execute_cdp_cmd('Page.captureScreenshot', {
        'format': 'png', 'captureBeyondViewport': True,
        'clip': {'x': 0, 'y': 0, 'width': size['width'], 'height': size['height'], 'scale': 1}})
    with open(shot_path, 'wb') as f:
        f.write(base64.b64decode(shot['data']))
    print('# screenshot: ' + shot_path)
except Exception:
    failed_hard = True
    check('the test ran to its end', False,
          traceback.format_exc().rstrip().replace('\n', '\n    '))
finally:
    if driver is not None:
        driver.quit()

failed = results.count(False)
print('%d passed, %d failed' % (len(results) - failed, failed))
sys.exit(1 if failed or failed_hard else 0)
