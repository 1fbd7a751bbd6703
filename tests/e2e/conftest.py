"""A real Chromium (Debian's package) driven by Playwright against pytest-django's live server.

`make test` installs the `chromium` package when it is missing; Playwright's own
browser downloads are never used.
"""

from __future__ import annotations

import shutil

import pytest
from django.db import connections

from tests.e2e.demo import demo, demo_snapshot  # noqa: F401 - the demo world, for the tests of every main page

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]


@pytest.fixture
def browser(live_server, monkeypatch):
    """One headless Chromium per test, started after the database and the live server.

    Playwright's sync API runs an event loop in this thread while the browser is up;
    the test's own ORM calls stay synchronous, one at a time, so Django's guard is
    lifted for this test only (and the loop is gone before the next test)."""
    if not shutil.which(CHROMIUM):
        raise RuntimeError(f"{CHROMIUM} is missing: apt-get install -y chromium (make test does it)")
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield browser
        # Connections the test opened while the loop ran live in that context's storage:
        # close them here, or they outlive the test and block dropping the test database.
        connections.close_all()
        browser.close()


@pytest.fixture
def person(browser, live_server):
    """person("alice") -> a logged-in Playwright page in a browser context of its own."""
    contexts = []

    def log_in(username: str, password: str = "pw"):
        context = browser.new_context(base_url=live_server.url)
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        page.goto("/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/login/" not in url)
        return page

    yield log_in
    for context in contexts:
        context.close()


@pytest.fixture(autouse=True)
def _no_proxy_for_loopback(monkeypatch):
    # The thin client's urllib honours proxy variables; the live server is on loopback.
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
