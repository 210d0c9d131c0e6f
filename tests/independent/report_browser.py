"""Loads the page `agentlog report` writes in headless Chromium (Debian's chromium and
chromium-driver, driven by Selenium) and checks what a reader's browser shows.

Usage: report_browser.py SCREENSHOT_DIR REPORT.html

- Nothing runs and nothing is fetched: the only script element is the inert JSON data block
  (`type="application/json"`), no element has an event-handler attribute, and every image,
  style sheet or frame source is absent (the page is self-contained).
- The charts are inline SVG and drawn: at least six, each with shapes of non-zero size.
- Every link to a transcript opens a file that exists beside the page.
- At a phone's width (390 px) the page is no wider than the screen.
- Screenshots of the whole page, light and dark (prefers-color-scheme), at a desktop's width
  and at a phone's, go to SCREENSHOT_DIR, to look at.

Prints "report browser checks passed" when every check holds.
"""

import base64
import os
import sys
from urllib.parse import unquote, urlparse

from selenium.webdriver.common.by import By

# The same headless Chromium as the transcripts' check.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import browser  # noqa: E402


def screenshot(driver, path, width, scheme):
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
    height = driver.execute_script("return document.documentElement.scrollHeight")
    wide = driver.execute_script("return document.documentElement.scrollWidth")
    assert wide <= width + 1, f"at {width} px the page is {wide} px wide"
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": min(height, 12000), "scale": 1}})
    with open(path, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    return background


def main():
    shots, page = sys.argv[1], sys.argv[2]
    os.makedirs(shots, exist_ok=True)
    driver = browser()
    try:
        driver.get("file://" + os.path.abspath(page))
        scripts = driver.find_elements(By.TAG_NAME, "script")
        assert [s.get_attribute("type") for s in scripts] == ["application/json"], "a script other than the data block"
        handlers = driver.execute_script(
            "return Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes)"
            ".filter(a => /^on/i.test(a.name)).map(a => e.tagName + ' ' + a.name))")
        assert not handlers, f"event handlers: {handlers}"
        fetched = driver.execute_script(
            "return Array.from(document.querySelectorAll('[src], link[href], iframe, object, embed'))"
            ".map(e => e.outerHTML.slice(0, 80))")
        assert not fetched, f"the page fetches: {fetched}"
        charts = driver.find_elements(By.CSS_SELECTOR, "svg.chart")
        assert len(charts) >= 6, f"{len(charts)} charts"
        for chart in charts:
            size = driver.execute_script(
                "const r = arguments[0].querySelectorAll('rect'); return Array.from(r)"
                ".filter(e => e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().height > 0).length", chart)
            assert size > 0, f"a chart draws nothing: {chart.get_attribute('aria-label')}"
        links = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "td a")]
        for link in links:
            target = unquote(urlparse(link).path)
            assert os.path.isfile(target), f"a transcript link leads nowhere: {target}"
        light = screenshot(driver, os.path.join(shots, "report-light.png"), 1100, "light")
        dark = screenshot(driver, os.path.join(shots, "report-dark.png"), 1100, "dark")
        assert light != dark, f"the dark scheme changes nothing ({light})"
        screenshot(driver, os.path.join(shots, "report-phone-light.png"), 390, "light")
        screenshot(driver, os.path.join(shots, "report-phone-dark.png"), 390, "dark")
        print(f"{len(charts)} charts, {len(links)} transcript links")
    finally:
        driver.quit()
    print("report browser checks passed")


if __name__ == "__main__":
    main()
