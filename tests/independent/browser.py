"""Loads HTML transcripts in headless Chromium (Debian's chromium and chromium-driver, driven by
Selenium) and checks what a reader's browser does with them.

Usage: browser.py SCREENSHOT_DIR HOSTILE.html [TRANSCRIPT.html ...]

- HOSTILE.html is a transcript of text written to break out of its escaping. It is loaded twice:
  as written, and with its Content Security Policy taken out, so that escaping alone must keep
  every script from running. Nothing may run: no alert, `window.pwned` unset, the title kept.
- Every page: no script element, no element with an event-handler attribute, no link or source
  with a `javascript:` URL; every image it shows (embedded, or a file beside it) loads; each
  folded section (`<details>`) opens when its summary is clicked.
- A screenshot of each page (the top, with its first folded sections opened) goes to
  SCREENSHOT_DIR, to look at.

Prints "browser checks passed" when every check holds.
"""

import os
import re
import sys
import tempfile

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")


def browser():
    options = Options()
    options.binary_location = CHROMIUM
    for flag in [
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--window-size=1000,1400", f"--user-data-dir={tempfile.mkdtemp()}",
    ]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def check_page(driver, path, screenshot, hostile):
    driver.get("file://" + os.path.abspath(path))
    name = os.path.basename(path)
    try:
        alert = driver.switch_to.alert
        raise AssertionError(f"{name}: an alert opened: {alert.text}")
    except NoAlertPresentException:
        pass
    pwned = driver.execute_script("return window.pwned === undefined ? null : String(window.pwned)")
    assert pwned is None, f"{name}: a script from the log ran (window.pwned = {pwned})"
    assert "PWNED" not in driver.title, f"{name}: a script from the log changed the title"
    assert not driver.find_elements(By.TAG_NAME, "script"), f"{name}: the page holds a script element"
    assert not driver.find_elements(By.TAG_NAME, "iframe"), f"{name}: the page holds an iframe"
    handlers = driver.execute_script(
        "return Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes)"
        ".filter(a => /^on/i.test(a.name)).map(a => e.tagName + ' ' + a.name))"
    )
    assert not handlers, f"{name}: event-handler attributes: {handlers[:5]}"
    urls = driver.execute_script(
        "return Array.from(document.querySelectorAll('[href],[src]'))"
        ".map(e => e.getAttribute('href') || e.getAttribute('src'))"
    )
    bad = [u for u in urls if re.match(r"\s*(javascript|vbscript|data:text)", u or "", re.I)]
    assert not bad, f"{name}: unsafe URLs: {bad[:5]}"
    details = driver.find_elements(By.TAG_NAME, "details")
    for d in details[:3]:
        assert d.get_attribute("open") is None, f"{name}: a folded section starts open"
        summary = d.find_element(By.TAG_NAME, "summary")
        driver.execute_script("arguments[0].scrollIntoView()", summary)
        summary.click()
        assert driver.execute_script("return arguments[0].open", d), f"{name}: a folded section did not open"
    driver.execute_script("window.scrollTo(0, 0)")
    broken = driver.execute_script(
        "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
    )
    assert not broken, f"{name}: images that did not load: {broken[:3]}"
    if hostile:
        text = driver.find_element(By.TAG_NAME, "body").text
        assert "<script>" in text, f"{name}: the hostile text is not shown as text"
    driver.save_screenshot(screenshot)
    return len(details)


def main():
    out, hostile, pages = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    with open(hostile, encoding="utf-8") as f:
        html = f.read()
    without_policy = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    assert without_policy != html, "the hostile transcript has no Content Security Policy"
    bare = os.path.join(out, "hostile-without-policy.html")
    with open(bare, "w", encoding="utf-8") as f:
        f.write(without_policy)
    driver = browser()
    opened = 0
    try:
        for path, hostile_page in [(hostile, True), (bare, True)] + [(p, False) for p in pages]:
            shot = os.path.join(out, os.path.splitext(os.path.basename(path))[0] + ".png")
            folded = check_page(driver, path, shot, hostile_page)
            opened += folded
            print(f"{os.path.basename(path)}: {folded} folded sections, nothing ran; screenshot {shot}")
    finally:
        driver.quit()
    assert opened > 0, "no page had a folded section to open"
    print("browser checks passed")


if __name__ == "__main__":
    main()
