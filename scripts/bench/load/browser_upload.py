"""One upload through the panel's own uploader (Public/js/uploader.js: tus in PATCHes) in Debian's headless Chromium,
timed from choosing the file to the page saying it is uploaded. Used by scripts/bench/bench-browser-upload.sh.

  browser_upload.py BASE_URL EMAIL PASSWORD WAYPOINT_PAGE FILE

Prints {"seconds": ..., "status": "<the row's last status text>"}.
"""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "Tests" / "e2e"))
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from support import chrome  # noqa: E402

base, email, password, page, path = sys.argv[1:6]
driver = chrome()
try:
    driver.get(f"{base}/login")
    driver.find_element(By.NAME, "email").send_keys(email)
    driver.find_element(By.NAME, "password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
    WebDriverWait(driver, 30).until(lambda d: "/login" not in d.current_url)
    driver.get(f"{base}{page}")
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
    started = time.monotonic()
    driver.find_element(By.ID, "upload-files").send_keys(path)

    def status(d):
        rows = d.find_elements(By.CSS_SELECTOR, "#upload-progress .upload-status")
        if not rows:
            return False
        text, failed = rows[0].text, "text-danger" in (rows[0].get_attribute("class") or "")
        return text if text.startswith("Uploaded") or failed else False

    final = WebDriverWait(driver, 600, poll_frequency=0.02).until(status)
    print(json.dumps({"seconds": time.monotonic() - started, "status": final}))
finally:
    driver.quit()
