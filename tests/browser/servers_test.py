# The replay page's server cards: a server whose kind gives it a lane of its own (here the
# database) has a card that says, at each moment, whether it is up, crashed or paused, as the trace
# has it. Usage: servers_test.py PAGE (a run whose fault crashes "postgres" from 10 s to 40 s).
import sys
from pathlib import Path

from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, str(Path(__file__).resolve().parent))
import chromium  # noqa: E402

page = sys.argv[1]
results = []


def check(name, ok, detail=None):
    results.append(bool(ok))
    print(('ok - ' if ok else 'not ok - ') + name +
          ('' if ok or detail is None else '\n    ' + str(detail)), flush=True)


driver = chromium.start(capture_logs=True)
try:
    js = driver.execute_script

    def wait_for(script, *args, timeout=30):
        WebDriverWait(driver, timeout, poll_frequency=0.02).until(
            lambda d: d.execute_script(script, *args), 'no change: ' + script)

    def seek_ms(ms):
        js('''const s = document.getElementById("slider");
              s.value = String(arguments[0]);
              s.dispatchEvent(new Event("input", { bubbles: true }));
              s.dispatchEvent(new Event("change", { bubbles: true }));''', ms)
        wait_for('return document.getElementById("time").dataset.ns === arguments[0]',
                 str(ms * 1000000))

    def state(server):
        return js('''const c = document.querySelector('[data-server="' + arguments[0] + '"]');
                     return c ? c.querySelector('[data-field="state"]').textContent : null;''',
                  server)

    driver.get(Path(page).resolve().as_uri())
    wait_for('return document.body && document.body.dataset.ready === "1"', timeout=60)
    check('the page has a card for the database', state('postgres') is not None)
    seek_ms(5000)
    check('before the crash the database is up', state('postgres') == 'up', state('postgres'))
    seek_ms(20000)
    check('during the crash it is crashed', state('postgres') == 'crashed', state('postgres'))
    seek_ms(45000)
    check('after its restart it is up again', state('postgres') == 'up', state('postgres'))
    errors = [e for e in driver.get_log('browser') if e.get('level') == 'SEVERE']
    check('no console errors', not errors, errors)
finally:
    driver.quit()

sys.exit(0 if results and all(results) else 1)
