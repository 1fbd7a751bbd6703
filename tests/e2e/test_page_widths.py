"""Every main page, filled with the demo, fits the window at 1,280 px and at 390 px: the
document is never wider than the viewport (a wide table scrolls inside its own box).
A page that does not fit fails with its name, the width and the element reaching
furthest past the window's right edge."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.e2e.demo import DEMO_PASSWORD as PASSWORD
from tests.e2e.demo import VIEWPORTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


# The element reaching furthest right past the window, by its box or by its own text,
# leaving out what sits inside a box that scrolls or clips (it cannot widen the page).
WIDEST_ELEMENT = """() => {
  const clips = new Map();
  const clipped = (el) => {
    if (!el || el === document.body || el === document.documentElement) return false;
    if (!clips.has(el)) clips.set(el, getComputedStyle(el).overflowX !== "visible" || clipped(el.parentElement));
    return clips.get(el);
  };
  const range = document.createRange();
  const reach = (el) => {
    let edge = el.getBoundingClientRect().right;
    if (!clipped(el)) {
      for (const node of el.childNodes) {
        if (node.nodeType === Node.TEXT_NODE && node.textContent.trim()) {
          range.selectNodeContents(node);
          edge = Math.max(edge, range.getBoundingClientRect().right);
        }
      }
    }
    return edge + window.scrollX;
  };
  let widest = null, right = window.innerWidth;
  for (const el of document.querySelectorAll("body *")) {
    if (clipped(el.parentElement)) continue;
    const edge = reach(el);
    if (edge > right + 0.5) { widest = el; right = edge; }
  }
  if (!widest) return "no single element (a margin?)";
  const id = widest.id ? "#" + widest.id : "";
  const classes = [...widest.classList].map((c) => "." + c).join("");
  const text = (widest.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 60);
  return `<${widest.tagName.toLowerCase()}${id}${classes}> reaching ${Math.round(right)} px ("${text}")`;
}"""


@dataclass(frozen=True)
class Screen:
    name: str
    user: str | None  # the demo user who looks at it; None: logged out
    path: str  # may name the demo's objects: {dataset}, {request}, {job}


SCREENS = [
    Screen("dataset list", "alice", "/"),
    Screen("dataset page", "alice", "{dataset}"),
    Screen("contract catalogue", "alice", "/contracts/"),
    Screen("dataframe contract page", "alice", "/contracts/retail.sales.orders/"),
    Screen("event contract page", "alice", "/contracts/retail.checkout.order_placed/"),
    Screen("api contract page", "alice", "/contracts/retail.payments.refund_api/"),
    Screen("contract diff page", "alice", "/contracts/retail.sales.orders/diff/"),
    Screen("change request list", "alice", "/change-requests/"),
    Screen("change request review page", "carol", "{request}"),
    Screen("propose page", "alice", "/change-requests/new/?contract=retail.checkout.order_placed"),
    Screen("lineage job list", "alice", "/lineage/jobs/"),
    Screen("job page", "alice", "{job}"),
    Screen("freshness overview", "alice", "/freshness/"),
    Screen("login page", None, "/login/"),
    Screen("admin index", "gina", "/admin/"),
]


@pytest.fixture
def visitor(browser, live_server):
    """A logged-out page."""
    context = browser.new_context(base_url=live_server.url)
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("width", VIEWPORTS, ids=lambda width: f"{width}px")
@pytest.mark.parametrize("screen", SCREENS, ids=lambda screen: screen.name.replace(" ", "-"))
def test_the_page_is_no_wider_than_the_window(demo, person, request, screen, width):
    page = person(screen.user, PASSWORD) if screen.user else request.getfixturevalue("visitor")
    page.set_viewport_size(VIEWPORTS[width])
    answer = page.goto(screen.path.format(**demo))
    assert answer.ok, f"the {screen.name} answered {answer.status}"
    page.wait_for_load_state("networkidle")  # the propose page's preview, the lineage drawing
    fits = page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert fits, (f"the {screen.name} ({page.url}) is {page.evaluate('document.documentElement.scrollWidth')} px "
                  f"wide in a {width} px window; widest: {page.evaluate(WIDEST_ELEMENT)}")
