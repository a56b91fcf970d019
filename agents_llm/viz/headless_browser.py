"""Headless Chromium through Selenium, set up for closed networks (tests and the viewer benchmark).

Uses the system chromedriver (Debian's `chromium-driver`): Selenium Manager would try
to download one, which cannot work offline. The background-networking flags stop
Chromium's own connections (updates, sync, QUIC probes), which a closed network refuses.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
CHROMEDRIVER_CANDIDATES = ("/usr/bin/chromedriver",)
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1650,1000",
)


def _first_existing(paths) -> str | None:
    return next((p for p in paths if Path(p).exists()), None)


def browser_unavailable_reason() -> str | None:
    """Why a headless browser cannot start here (None when it can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    if _first_existing(CHROMIUM_CANDIDATES) is None and shutil.which("chromium") is None:
        return "chromium is not installed (apt-get install chromium)"
    if _first_existing(CHROMEDRIVER_CANDIDATES) is None and shutil.which("chromedriver") is None:
        return "chromedriver is not installed (apt-get install chromium-driver)"
    return None


@contextmanager
def headless_chromium(*, window: tuple[int, int] = (1650, 1000)):
    """A Selenium Chrome driver on a fresh, throw-away profile; quits and cleans up on exit."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    reason = browser_unavailable_reason()
    if reason:
        raise RuntimeError(f"cannot start headless Chromium: {reason}")
    profile = tempfile.mkdtemp(prefix="qmix-viewer-chromium-")
    options = webdriver.ChromeOptions()
    chromium = _first_existing(CHROMIUM_CANDIDATES) or shutil.which("chromium")
    assert chromium is not None, "browser_unavailable_reason() found a chromium"
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag if not flag.startswith("--window-size") else f"--window-size={window[0]},{window[1]}")
    options.add_argument(f"--user-data-dir={profile}")
    service = Service(_first_existing(CHROMEDRIVER_CANDIDATES) or shutil.which("chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


# Bokeh renders each widget in its own shadow root: search through all of them.
FIND_DEEP_JS = """
const selector = arguments[0];
function find(root) {
  const hit = root.querySelector(selector);
  if (hit) return hit;
  for (const el of root.querySelectorAll('*')) {
    if (el.shadowRoot) { const inner = find(el.shadowRoot); if (inner) return inner; }
  }
  return null;
}
return find(document);
"""


def find_deep(driver, selector: str):
    """The first element matching a CSS selector anywhere in the page, shadow roots included (or None)."""
    return driver.execute_script(FIND_DEEP_JS, selector)
