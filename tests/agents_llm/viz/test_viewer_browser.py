"""The viewer in a real headless Chromium, driven through Selenium (skipped without chromium/chromedriver)."""

import time

import pytest
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from agents_llm.viz.headless_browser import find_deep
from agents_llm.viz.synthetic_trace import make_trace
from agents_llm.viz.trace_viewer import write_viewer

from .conftest import INJECTION, first_active_agent, injected_trace, open_viewer

pytestmark = pytest.mark.slow


def fresh(read, what: str):
    """Bokeh replaces widgets' DOM while playing: an element found a moment ago can be gone
    when read. Look it up again on a stale read instead of failing on the race."""
    for _ in range(20):
        try:
            return read()
        except StaleElementReferenceException:
            time.sleep(0.05)
    raise AssertionError(f"{what} kept being replaced while it was read")


def panel_text(driver, css_class: str) -> str:
    def read():
        host = find_deep(driver, f".{css_class}")
        assert host is not None, f"no element .{css_class} on the page"
        return host.shadow_root.find_element(By.CSS_SELECTOR, ".bk-clearfix").text

    return fresh(read, f"the .{css_class} panel")


def slider_value(driver) -> int:
    return fresh(lambda: int(float(find_deep(driver, ".noUi-handle").get_attribute("aria-valuenow"))), "the slider")


def play_text(driver) -> str:
    return fresh(lambda: play_button(driver).text, "the play button")


def play_button(driver):
    # looked up each time: Bokeh re-renders the button when its label changes
    return find_deep(driver, ".qv-play").shadow_root.find_element(By.CSS_SELECTOR, "button")


def wait_for(condition, timeout_s: float = 10.0, what: str = "condition"):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def assert_loaded_nothing_from_the_network(driver):
    urls = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(not u.startswith(("http:", "https:")) for u in urls), urls


def test_slider_and_play_step_through_the_episode(browser, save_trace, tmp_path):
    doc = make_trace(rounds=30, n_agents=5, seed=11)
    html = write_viewer(save_trace(doc), tmp_path / "view.html", play_interval_ms=150)
    open_viewer(browser, html)
    assert_loaded_nothing_from_the_network(browser)
    first_panel, first_header = panel_text(browser, "qv-agent"), panel_text(browser, "qv-step")
    assert first_panel.startswith(first_active_agent(doc)) and "step 1 of" in first_header
    header = panel_text(browser, "qv-header")  # the env and its team, as run names say them
    assert "env report_writing_v0+smollm2-135m" in header and "team LLM smollm2-135m" in header

    handle = find_deep(browser, ".noUi-handle")
    handle.click()
    for _ in range(3):
        handle.send_keys(Keys.ARROW_RIGHT)
    wait_for(lambda: slider_value(browser) == 4, what="the slider to reach step 4")
    wait_for(lambda: "step 4 of" in panel_text(browser, "qv-step"), what="the step header to follow the slider")
    assert panel_text(browser, "qv-agent") != first_panel

    before_play = slider_value(browser)
    panel_before_play = panel_text(browser, "qv-agent")
    play_button(browser).click()
    wait_for(lambda: slider_value(browser) >= before_play + 3, what="play to advance the slider")
    assert panel_text(browser, "qv-agent") != panel_before_play
    assert "Pause" in play_text(browser)
    play_button(browser).click()  # pause
    wait_for(lambda: "Play" in play_text(browser), what="the button to turn back into Play")
    paused_at = slider_value(browser)
    time.sleep(0.6)  # four play intervals: a running timer would have moved on
    assert slider_value(browser) == paused_at and "Play" in play_text(browser)

    shot = tmp_path / "viewer.png"
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 20_000  # a rendered page, not a blank one


def test_a_response_with_a_script_tag_is_shown_as_text_and_never_runs(browser, save_trace, tmp_path):
    html = write_viewer(save_trace(injected_trace()), tmp_path / "inj.html")
    open_viewer(browser, html)
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text
    text = panel_text(browser, "qv-agent")
    assert INJECTION in text and '<img src=x onerror="alert(2)">' in text


@pytest.mark.parametrize("rounds", [1, 100])
def test_one_and_hundred_round_traces_render_and_reach_their_last_step(browser, save_trace, tmp_path, rounds):
    doc = make_trace(rounds=rounds, n_agents=4, seed=rounds)
    html = write_viewer(save_trace(doc), tmp_path / f"r{rounds}.html")
    open_viewer(browser, html)
    assert f"Round 1 of {rounds}" in panel_text(browser, "qv-step")
    handle = find_deep(browser, ".noUi-handle")
    handle.click()
    handle.send_keys(Keys.END)
    wait_for(lambda: f"Round {rounds} of {rounds}" in panel_text(browser, "qv-step"), what="the last round")
    assert "Final report" in panel_text(browser, "qv-report")


def test_a_trace_with_a_one_megabyte_response_renders_it_clipped(browser, save_trace, tmp_path):
    doc = make_trace(rounds=2, n_agents=4, seed=4)
    agent = first_active_agent(doc)
    doc["rounds"][0]["agents"][agent]["response"] = "y" * 1_000_000
    html = write_viewer(save_trace(doc), tmp_path / "big.html")
    open_viewer(browser, html)
    text = panel_text(browser, "qv-agent")
    assert "y" * 1000 in text and "900,000 more characters not shown" in text


def test_an_empty_trace_shows_a_page_saying_the_episode_has_no_rounds(browser, save_trace, tmp_path):
    html = write_viewer(save_trace(make_trace(rounds=0)), tmp_path / "empty.html")
    open_viewer(browser, html)
    assert "This episode has no rounds." in panel_text(browser, "qv-empty")
