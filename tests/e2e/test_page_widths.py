"""Every main page, filled with the demo, fits the window at 1,280 px and at 390 px: the
document is never wider than the viewport (a wide table scrolls inside its own box).
A page that does not fit fails with its name, the width and the element reaching
furthest past the window's right edge."""

from __future__ import annotations

import io
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from change_requests.models import ChangeRequest
from contracts_app.models import SchemaDriftCheck
from lineage.models import Job, QualityCheck
from registry.env import parse_contract_store
from registry.models import Dataset

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = {1280: {"width": 1280, "height": 800}, 390: {"width": 390, "height": 844}}
PASSWORD = "demo-password"

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


@pytest.fixture(scope="module")
def demo_snapshot(django_db_setup, django_db_blocker, tmp_path_factory) -> tuple[Path, Path]:
    """The demo, loaded once for the module and kept as a fixture file (loading it is
    the slow part); the database is emptied again for the tests, which load the file.
    Returns (fixture file, contract store)."""
    root = tmp_path_factory.mktemp("demo")
    store, snapshot = root / "store", root / "demo.json"
    with override_settings(CONTRACT_STORE=parse_contract_store(str(store), base_dir=root)), \
            django_db_blocker.unblock():
        try:
            call_command("load_demo", stdout=io.StringIO())
            call_command("dumpdata", "--natural-foreign", "--exclude=contenttypes", "--exclude=auth.permission",
                         "--exclude=sessions", "--exclude=admin.logentry", "--exclude=axes", output=str(snapshot))
        finally:
            call_command("flush", interactive=False, verbosity=0)
    return snapshot, store


@pytest.fixture
def demo(demo_snapshot, settings) -> dict[str, str]:
    """The loaded demo, its orders dataset also drifting from its contract and failing a
    quality check (the demo has neither on a dataset with consumers); the paths of the
    objects the screens name."""
    snapshot, store = demo_snapshot
    settings.CONTRACT_STORE = parse_contract_store(str(store), base_dir=store.parent)
    call_command("loaddata", str(snapshot), verbosity=0)
    orders = Dataset.objects.get(namespace="postgres://retail-db:5432", name="retail.public.orders")
    now = timezone.now()
    SchemaDriftCheck.objects.create(
        dataset=orders, contract_name="retail.sales.orders", version="2.0", run_uuid=uuid.uuid4(),
        job_namespace="airflow", job_name="checkout.load_orders_from_the_shop_database", event_type="COMPLETE",
        event_time=now, drift_count=2, findings=[
            {"kind": "missing_required", "field": "total_amount_including_taxes_and_shipping", "severity": "drift",
             "expected": "float64", "actual": None,
             "message": "'total_amount_including_taxes_and_shipping' is required by the contract but the output "
                        "has no such field."},
            {"kind": "type_mismatch", "field": "placed_at", "severity": "drift", "expected": "datetime64[ns, UTC]",
             "actual": "VARCHAR", "message": "'placed_at' is 'VARCHAR' in the output; the contract says a timestamp."},
        ])
    QualityCheck.objects.create(
        dataset=orders, run_uuid=uuid.uuid4(), job_namespace="dbt", job_name="retail.test_orders_not_null_and_unique",
        event_type="COMPLETE", event_time=now, assertion_count=3, failed_count=1, metrics={"rowCount": 1310},
        assertions=[{"assertion": "not_null", "column": "customer_id", "success": False, "severity": "error"},
                    {"assertion": "unique", "column": "order_id", "success": True}])
    return {
        "dataset": orders.get_absolute_url(),
        "request": ChangeRequest.objects.filter(state="open").order_by("pk").first().get_absolute_url(),
        "job": Job.objects.get(name="analytics.customer_orders").get_absolute_url(),
    }


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
