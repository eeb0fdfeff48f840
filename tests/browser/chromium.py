# Debian's headless Chromium for the browser scripts (replay_test.py, measure.py): driven by
# python3-selenium through /usr/bin/chromedriver, with the network out of reach (no proxy answers
# on port 9 and no host name resolves) and the page shown a 1400x900 viewport.
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait


def start(capture_logs=False):
    """Starts Chromium; with capture_logs, its console and network logs can be read back."""
    options = webdriver.ChromeOptions()
    options.binary_location = '/usr/bin/chromium'
    for arg in ['--headless=new', '--no-sandbox', '--disable-gpu', '--window-size=1400,900',
                '--hide-scrollbars', '--disable-quic', '--no-first-run',
                '--disable-background-networking', '--disable-component-update', '--disable-sync',
                '--proxy-server=127.0.0.1:9', '--host-resolver-rules=MAP * ~NOTFOUND']:
        options.add_argument(arg)
    if capture_logs:
        # The browser log carries console errors and uncaught exceptions; the performance log
        # carries the page's requests (Network.requestWillBeSent).
        options.set_capability('goog:loggingPrefs', {'browser': 'ALL', 'performance': 'ALL'})
    driver = webdriver.Chrome(service=Service(executable_path='/usr/bin/chromedriver'),
                              options=options)
    # The page itself sees a 1400x900 viewport (the window's frame would take some of it).
    driver.execute_cdp_cmd('Emulation.setDeviceMetricsOverride',
                           {'width': 1400, 'height': 900, 'deviceScaleFactor': 1, 'mobile': False})
    return driver


def wait_for(driver, script, *args, timeout=30):
    """Waits until the script returns something true."""
    WebDriverWait(driver, timeout, poll_frequency=0.02).until(
        lambda d: d.execute_script(script, *args),
        'no change within %d s: %s %s' % (timeout, ' '.join(script.split()), list(args)))


def seek_ms(driver, ms):
    """Moves a replay page's time slider to `ms` and waits until the page shows that moment."""
    driver.execute_script('''const s = document.getElementById("slider");
          s.value = String(arguments[0]);
          s.dispatchEvent(new Event("input", { bubbles: true }));
          s.dispatchEvent(new Event("change", { bubbles: true }));''', ms)
    wait_for(driver, 'return document.getElementById("time").dataset.ns === arguments[0]',
             str(ms * 1000000))
