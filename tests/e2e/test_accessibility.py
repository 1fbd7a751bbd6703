"""axe-core, run in a real Chromium, finds nothing on the main pages filled with the
demo, at 1,280 px and at 390 px: its default rules (WCAG 2 A and AA, and its best
practices such as landmarks and heading order), none switched off. A failure lists
every violation: the page, the width, the rule, its impact, the element and the rule's
help page."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.e2e.demo import DEMO_PASSWORD, VIEWPORTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@dataclass(frozen=True)
class Screen:
    name: str
    user: str | None  # the demo user who looks at it; None: logged out
    path: str  # may name the demo's objects: {dataset}, {request}, {job}, {columns}


# README's Screens (scripts/screenshots) and the pages people reach from them most.
SCREENS = [
    Screen("inbox", "carol", "/inbox/"),
    Screen("team inbox", "carol", "/inbox/teams/analytics/"),
    Screen("dataset list", "alice", "/"),
    Screen("dataset page", "alice", "{dataset}"),
    Screen("contract catalogue", "alice", "/contracts/"),
    Screen("dataframe contract page", "alice", "/contracts/retail.sales.orders/"),
    Screen("lanes page", "alice", "/contracts/retail.sales.orders/lanes/"),
    Screen("change request list", "alice", "/change-requests/"),
    Screen("change request review page", "carol", "{request}"),
    Screen("propose page", "alice", "/change-requests/new/?contract=retail.checkout.order_placed"),
    Screen("lineage graph of a job", "carol", "{job}"),
    Screen("column view", "carol", "{columns}"),
    Screen("freshness status view", "alice", "/freshness/"),
    Screen("login page", None, "/login/"),
    Screen("admin index", "gina", "/admin/"),
]


def described(screen: Screen, width: int, url: str, violation: dict) -> list[str]:
    """One line per element that breaks the rule."""
    return [f"{screen.name} at {width} px ({url}): {violation['id']} ({violation['impact']}) "
            f"{' '.join(map(str, node['target']))}: {violation['help']} <{violation['helpUrl']}>"
            for node in violation["nodes"]]


def test_axe_finds_no_violation_on_the_main_pages(demo, browser, person, live_server):
    """One server, one browser and one logged-in context per person for all the pages."""
    axe = Axe()
    pages = {}
    found: list[str] = []
    for screen in SCREENS:
        if screen.user not in pages:
            if screen.user:
                pages[screen.user] = person(screen.user, DEMO_PASSWORD)
            else:
                pages[None] = browser.new_context(base_url=live_server.url).new_page()
        page = pages[screen.user]
        for width, viewport in VIEWPORTS.items():
            page.set_viewport_size(viewport)
            answer = page.goto(screen.path.format(**demo))
            assert answer.ok, f"the {screen.name} answered {answer.status}"
            page.wait_for_load_state("networkidle")  # the propose page's preview, the lineage drawing
            for violation in axe.run(page).response["violations"]:
                found += described(screen, width, page.url, violation)
    assert not found, f"axe-core found {len(found)} violations:\n" + "\n".join(found)
