"""The visitor web player in Debian's headless Chromium on a phone-sized screen, through a throttled link
(throttle_proxy.py): saves a tour for offline use, then, once the park has released a new version, updates it.
Used by scripts/bench/bench-player.sh.

  player_offline.py BASE_URL PACKAGE_ID COUNT_FILE SYNC_FOLDER

1. Opens /visit/PACKAGE_ID, taps "Save for offline", and times from opening the link to the player saying the tour
   is ready offline.
2. Writes SYNC_FOLDER/saved and waits for SYNC_FOLDER/released (the script releases the next version meanwhile).
3. Reloads, taps "Update", and counts the bytes the link carried (COUNT_FILE) from the tap to "ready".
Also the time from navigation to the first stop on screen, at the first open, at the second (saved) one, and at a
third with the link down (COUNT_FILE.down, see throttle_proxy.py).

Prints {"ready_seconds": ..., "save_bytes": ..., "first_open_ms": ..., "second_open_ms": ..., "offline_open_ms": ..., "update_seconds": ..., "update_bytes": ..., "version": ...}.
"""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "Tests" / "e2e"))
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from support import chrome, set_viewport  # noqa: E402

base, package, count_file, sync = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])


def offline_state(driver):
    return driver.execute_script("return document.getElementById('player')?.dataset.offlineState")


def wait_state(driver, *wanted, timeout=600):
    WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: offline_state(d) in wanted + ("failed",))
    state = offline_state(driver)
    if state not in wanted:
        raise SystemExit(f"the player failed: {driver.find_element(By.ID, 'player').text}")
    return state


def link_bytes() -> int:
    time.sleep(0.2)  # the proxy writes its count every 50 ms
    return int(count_file.read_text())


def first_stop_ms(driver) -> float:
    """Milliseconds from the start of the page's navigation to the first stop on screen, as the page's own clock
    (performance.now()) read by an observer that every new document gets before its scripts run."""
    WebDriverWait(driver, 120, poll_frequency=0.05).until(lambda d: d.execute_script("return window.__firstStop") is not None)
    return driver.execute_script("return window.__firstStop")


def run(driver) -> dict:
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        new MutationObserver((_, observer) => {
          if (document.querySelector('[data-stop-order="1"]')) { window.__firstStop = performance.now(); observer.disconnect(); }
        }).observe(document, { childList: true, subtree: true });
    """})
    opened_with = link_bytes()
    started = time.monotonic()
    driver.get(f"{base}/visit/{package}")
    # "online-only": the signature checked and the save button wired (it does nothing before).
    wait_state(driver, "online-only")
    first_open_ms = first_stop_ms(driver)
    driver.find_element(By.CSS_SELECTOR, "[data-action='save-offline']").click()
    wait_state(driver, "ready")
    ready_seconds = time.monotonic() - started
    save_bytes = link_bytes() - opened_with
    # The second open of the saved tour: the held copy is checked and shown before the catalog is asked.
    driver.refresh()
    wait_state(driver, "ready")
    second_open_ms = first_stop_ms(driver)
    down = Path(str(count_file) + ".down")
    down.touch()
    try:
        driver.refresh()
        wait_state(driver, "ready")
        offline_open_ms = first_stop_ms(driver)
    finally:
        down.unlink()

    (sync / "saved").touch()
    WebDriverWait(driver, 900, poll_frequency=0.2).until(lambda _: (sync / "released").exists())
    driver.refresh()
    wait_state(driver, "update-available")
    before = link_bytes()
    tapped = time.monotonic()
    driver.find_element(By.CSS_SELECTOR, "[data-action='update']").click()
    WebDriverWait(driver, 900, poll_frequency=0.05).until(lambda d: "version 2" in d.find_element(By.ID, "offline-status").text
                                                          or offline_state(d) == "failed")
    wait_state(driver, "ready")
    update_seconds = time.monotonic() - tapped
    return {"ready_seconds": ready_seconds, "save_bytes": save_bytes, "first_open_ms": first_open_ms, "second_open_ms": second_open_ms, "offline_open_ms": offline_open_ms, "update_seconds": update_seconds, "update_bytes": link_bytes() - before,
            "version": driver.find_element(By.ID, "offline-status").text}


driver = chrome(arguments=("--autoplay-policy=user-gesture-required",))
try:
    set_viewport(driver, 390, 844, mobile=True)
    driver.set_page_load_timeout(600)
    print(json.dumps(run(driver)))
except Exception:
    # What the page said and logged, so a stalled run can be told apart from a slow one.
    print("player:", driver.execute_script("return document.getElementById('player')?.innerText"), file=sys.stderr)
    for entry in driver.get_log("browser"):
        print("console:", entry.get("message"), file=sys.stderr)
    raise
finally:
    driver.quit()
