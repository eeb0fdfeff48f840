# The replay page's server cards: a server whose kind gives it a lane of its own (here the
# database) has a card that says, at each moment, whether it is up, crashed or paused, as the trace
# has it. Usage: servers_test.py PAGE (a run whose fault crashes "postgres" from 10 s to 40 s).
import sys
from pathlib import Path

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

    def state(server):
        return js('''const c = document.querySelector('[data-server="' + arguments[0] + '"]');
                     return c ? c.querySelector('[data-field="state"]').textContent : null;''',
                  server)

    driver.get(Path(page).resolve().as_uri())
    chromium.wait_for(driver, 'return document.body && document.body.dataset.ready === "1"',
                      timeout=60)
    check('the page has a card for the database', state('postgres') is not None)
    chromium.seek_ms(driver, 5000)
    check('before the crash the database is up', state('postgres') == 'up', state('postgres'))
    chromium.seek_ms(driver, 20000)
    check('during the crash it is crashed', state('postgres') == 'crashed', state('postgres'))
    chromium.seek_ms(driver, 45000)
    check('after its restart it is up again', state('postgres') == 'up', state('postgres'))
    errors = [e for e in driver.get_log('browser') if e.get('level') == 'SEVERE']
    check('no console errors', not errors, errors)
finally:
    driver.quit()

sys.exit(0 if results and all(results) else 1)
