"""The control panel under a district's load, for locust: rangers editing their tours, reviewers working
through the queue, and apps polling the catalog and downloading, all at once. Run by scripts/bench/bench-panel-load.sh,
which makes the accounts, tours, publish requests and a released package first and names them in $LOAD_SETUP.

Each request is named by its route (ids replaced by {…}) so the table has one row per page or API call."""
import itertools
import json
import os
import re
import threading

from locust import HttpUser, between, events, task

SETUP = json.loads(open(os.environ["LOAD_SETUP"]).read())
PASSWORD = SETUP["password"]
PNG = open(SETUP["png"], "rb").read()
_rangers = itertools.count()
_reviewers = itertools.count()
_lock = threading.Lock()
# Think time between a user's requests, in seconds: 1–3 by default (people and phones pause); LOAD_THINK=0 sends
# the next request at once (the saturation run).
THINK = float(os.environ.get("LOAD_THINK", "3"))
think = between(min(1, THINK), THINK)
_queue = list(SETUP["pendingRequests"])  # requests still waiting for an approval


def next_request():
    with _lock:
        return _queue.pop() if _queue else None


class Panel:
    """Signs in through the login form and keeps the CSRF token for the forms it posts."""

    def sign_in(self, email):
        page = self.client.get("/login", name="GET /login")
        token = re.search(r'name="_csrf" value="([^"]+)"', page.text).group(1)
        answer = self.client.post("/login", data={"_csrf": token, "email": email, "password": PASSWORD, "next": "/sites"},
                                  name="POST /login", allow_redirects=False)
        assert answer.status_code == 303, f"sign-in of {email}: {answer.status_code}"
        sites = self.client.get("/sites", name="GET /sites")
        self.csrf = re.search(r'name="_csrf" value="([^"]+)"', sites.text).group(1)

    def post_form(self, path, data, name):
        return self.client.post(path, data=dict(data, _csrf=self.csrf), name=name, allow_redirects=False)


class Ranger(Panel, HttpUser):
    """Opens their tour and waypoints, saves a waypoint, reorders, uploads a small picture."""
    weight = 40
    wait_time = think

    def on_start(self):
        index = next(_rangers) % len(SETUP["rangers"])
        self.me = SETUP["rangers"][index]
        self.sign_in(self.me["email"])
        self.edits = 0

    @task(4)
    def tour_page(self):
        self.client.get(f"/tours/{self.me['tour']}", name="GET /tours/{id}")

    @task(2)
    def waypoint_page(self):
        self.client.get(f"/tours/{self.me['tour']}/waypoints/{self.me['waypoints'][0]}", name="GET /tours/{id}/waypoints/{wid}")

    @task(2)
    def save_waypoint(self):
        self.edits += 1
        wid = self.me["waypoints"][0]
        self.post_form(f"/tours/{self.me['tour']}/waypoints/{wid}",
                       {"name": "Fish Lake", "latitude": "44.40", "longitude": "-122.0",
                        "description": f"Edit {self.edits}: the old remount depot is to the east.", "triggerRadiusMeters": "30"},
                       "POST /tours/{id}/waypoints/{wid}")

    @task(1)
    def reorder(self):
        ids = list(self.me["waypoints"])
        if self.edits % 2:
            ids.reverse()
        self.client.post(f"/tours/{self.me['tour']}/waypoints/order", data=[("_csrf", self.csrf)] + [("ids", str(i)) for i in ids],
                         name="POST /tours/{id}/waypoints/order", allow_redirects=False)

    @task(1)
    def upload_picture(self):
        wid = self.me["waypoints"][1]
        self.client.post(f"/tours/{self.me['tour']}/waypoints/{wid}/assets?_csrf={self.csrf}",
                         files={"file": ("view.png", PNG, "image/png")}, name="POST /tours/{id}/waypoints/{wid}/assets (60 KB)",
                         allow_redirects=False)


class Reviewer(Panel, HttpUser):
    """Opens the review queue and a request, approves the ones still waiting."""
    weight = 10
    wait_time = think

    def on_start(self):
        index = next(_reviewers) % len(SETUP["reviewers"])
        self.sign_in(SETUP["reviewers"][index])

    @task(3)
    def queue(self):
        self.client.get("/reviews", name="GET /reviews")

    @task(2)
    def approve(self):
        request_id = next_request()
        self.client.get(f"/requests/{request_id or SETUP['pendingRequests'][0]}", name="GET /requests/{rid}")
        if request_id:  # each waiting request is approved once; then the reviewer only reads
            self.post_form(f"/requests/{request_id}/approve", {"comment": "Walked it."}, "POST /requests/{rid}/approve")


class App(HttpUser):
    """A phone: polls the catalog and the package list, reads metadata, downloads the package now and then."""
    weight = 20
    wait_time = think

    @task(3)
    def catalog(self):
        self.client.get("/api/v1/catalog", name="GET /api/v1/catalog")

    @task(3)
    def packages(self):
        self.client.get(f"/api/v1/sites/{SETUP['site']}/packages", name="GET /api/v1/sites/{slug}/packages")

    @task(2)
    def detail(self):
        self.client.get(f"/api/v1/packages/{SETUP['package']}", name="GET /api/v1/packages/{id}")

    @task(1)
    def download(self):
        with self.client.get(f"/api/v1/packages/{SETUP['package']}/download", name="GET /api/v1/packages/{id}/download",
                             stream=True, catch_response=True) as answer:
            size = sum(len(chunk) for chunk in answer.iter_content(65536))
            if size != SETUP["packageSize"]:
                answer.failure(f"{size} bytes of {SETUP['packageSize']}")
