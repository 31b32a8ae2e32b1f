"""The reference for the panel's uploader: the same headless Chromium sending the same file to nginx in one `PUT`
(a `dav_methods PUT` location), from a page of that nginx, timed as browser_upload.py times the panel: from choosing
the file to the page saying it is stored. Used by scripts/bench/bench-deployed-upload.sh.

  browser_put.py PAGE_URL FILE

PAGE_URL is an empty page on the nginx server whose /dav/ location takes PUTs. Prints {"seconds": ..., "status": N}.
"""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "Tests" / "e2e"))
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from support import chrome  # noqa: E402

page, path = sys.argv[1:3]
driver = chrome()
try:
    driver.get(page)
    # A file field that PUTs what is chosen, as the panel's field starts its uploader; the status lands in the title.
    driver.execute_script("""
        const input = document.createElement('input');
        input.type = 'file';
        input.id = 'put-file';
        input.addEventListener('change', async () => {
            const response = await fetch('/dav/upload.bin', {method: 'PUT', body: input.files[0]});
            document.title = 'done ' + response.status;
        });
        document.body.appendChild(input);
    """)
    started = time.monotonic()
    driver.find_element(By.ID, "put-file").send_keys(path)
    title = WebDriverWait(driver, 600, poll_frequency=0.02).until(lambda d: d.title if d.title.startswith("done") else False)
    print(json.dumps({"seconds": time.monotonic() - started, "status": int(title.split()[1])}))
finally:
    driver.quit()
