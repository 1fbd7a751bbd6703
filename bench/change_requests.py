"""Change requests: the review page's queries and time as teams and changes grow, and
one clock pass when many requests pass their deadline at once.

    python bench/change_requests.py [--teams 1,20,100] [--changes 1,100,1000] [--due 1000] [--smoke]

Last line: JSON {"review_page": {"T teams x C changes": {"queries", "p50_ms"}},
"queries_constant": bool, "clock": {"due", "escalated", "first_pass_s", "second_pass_s", ...}}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._django import fresh_database, machine, setup_django  # noqa: E402

DOCUMENT = {
    "schema": {"name": "bench.orders.order", "domain": "bench", "subdomains": ["orders"], "entity": "order",
               "version": "1.0", "owner": "owners", "schema_type": "event", "description": "bench"},
    "meta": {},
    "payload": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--teams", default="1,20,100")
    parser.add_argument("--changes", default="1,100,1000")
    parser.add_argument("--due", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--smoke", action="store_true", help="2 teams, 1 and 5 changes, 10 due: seconds, for CI")
    args = parser.parse_args()
    if args.smoke:
        args.teams, args.changes, args.due, args.repeat = "1,2", "1,5", 10, 2
    os.environ["EMAIL_BACKEND"] = "django.core.mail.backends.locmem.EmailBackend"
    fresh_database()
    setup_django()

    from django.contrib.auth import get_user_model
    from django.core import mail
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from change_requests import notifications
    from change_requests.models import ChangeRequest, Notification
    from change_requests.workflows import open_change_request, run_clock
    from contracts_app.models import Contract, ContractVersion, DatasetBinding
    from registry.models import Consumer, Dataset, Membership, Team

    User = get_user_model()
    owner = User.objects.create_user("owner", "owner@example.com", "x")
    owners = Team.objects.create(name="Owners", slug="owners")
    Membership.objects.create(team=owners, user=owner)
    User.objects.create_user("admin", "admin@example.com", "x", is_staff=True)
    viewer = User.objects.create_user("viewer", "viewer@example.com", "x")

    def contract_with_consumers(name: str, teams: list[Team]) -> Contract:
        contract = Contract.objects.create(name=name, domain="bench", subdomains=["orders"], entity=name.split(".")[-1],
                                           schema_type="event", owner_team=owners)
        ContractVersion.objects.create(contract=contract, version="1.0", document=DOCUMENT, checksum="0" * 64)
        dataset = Dataset.objects.create(namespace="bench", name=name, owner_team=owners, owner=owner)
        Consumer.objects.bulk_create(Consumer(dataset=dataset, team=t) for t in teams)
        DatasetBinding.objects.create(dataset=dataset, contract=contract)
        return contract

    all_teams = []
    for i in range(max(int(t) for t in args.teams.split(","))):
        team = Team.objects.create(name=f"Consumers {i:03}", slug=f"consumers-{i:03}")
        member = User.objects.create_user(f"member{i}", f"member{i}@example.com", "x")
        Membership.objects.create(team=team, user=member)
        all_teams.append(team)
    Membership.objects.create(team=all_teams[0], user=viewer)

    client = Client()
    client.force_login(viewer)
    page_results = {}
    for teams in (int(t) for t in args.teams.split(",")):
        for changes in (int(c) for c in args.changes.split(",")):
            contract = contract_with_consumers(f"bench.orders.t{teams}_c{changes}", all_teams[:teams])
            proposed = json.loads(json.dumps(DOCUMENT))
            proposed["schema"].update(name=contract.name, version="2.0")
            proposed["payload"]["properties"].update({f"f{i}": {"type": "integer"} for i in range(changes)})
            report = {"mode": "BACKWARD", "compatible": False, "changes": [
                {"path": f"/properties/f{i}", "kind": "property_added", "breaks_backward": False,
                 "breaks_forward": True, "reason": "bench", "against": "1.0", "breaking": False}
                for i in range(changes)]}
            request = open_change_request(contract, proposed, by=owner, report=report)
            timings = []
            for _ in range(args.repeat):
                with CaptureQueriesContext(connection) as queries:
                    start = time.perf_counter()
                    response = client.get(request.get_absolute_url())
                    timings.append((time.perf_counter() - start) * 1000)
                assert response.status_code == 200
            key = f"{teams} teams x {changes} changes"
            page_results[key] = {"queries": len(queries), "p50_ms": round(statistics.median(timings), 2)}
            print(f"review page, {key}: {page_results[key]}", file=sys.stderr)

    print(f"opening {args.due} requests due at once…", file=sys.stderr)
    due_teams = all_teams[:2]
    for i in range(args.due):
        contract = contract_with_consumers(f"bench.due.c{i:05}", due_teams)
        proposed = json.loads(json.dumps(DOCUMENT))
        proposed["schema"].update(name=contract.name, version="2.0")
        open_change_request(contract, proposed, by=owner, report={"mode": "BACKWARD", "compatible": False, "changes": []})
    notifications.deliver_pending(limit=10 * args.due)  # the "opened" messages, out of the way
    ChangeRequest.objects.filter(contract__name__startswith="bench.due.").update(deadline_at=timezone.now() - timedelta(seconds=1))
    mail.outbox = []
    # The pass's own work (claim, stamp, audit, queue) is timed apart from delivery, which
    # a worker does after commit; here delivery is held back, then timed on its own.
    send = notifications.deliver_pending
    notifications.deliver_pending = lambda *a, **k: (0, 0)
    try:
        with CaptureQueriesContext(connection) as first_queries:
            start = time.perf_counter()
            first = run_clock()
            first_s = time.perf_counter() - start
        start = time.perf_counter()
        second = run_clock()
        second_s = time.perf_counter() - start
    finally:
        notifications.deliver_pending = send
    queued = Notification.objects.unsent().count()
    start = time.perf_counter()
    sent, failed = send(limit=queued)
    deliver_s = time.perf_counter() - start
    clock = {"due": args.due, "escalated": len(first.escalated), "first_pass_s": round(first_s, 2),
             "first_pass_queries": len(first_queries), "second_pass_escalated": len(second.escalated),
             "second_pass_s": round(second_s, 3), "notifications_queued": queued, "sent": sent, "failed": failed,
             "emails": len(mail.outbox), "delivery_s": round(deliver_s, 2),
             "delivery_per_s": round(sent / deliver_s, 1) if deliver_s else None}
    print(f"clock: {clock}", file=sys.stderr)
    print(json.dumps({"machine": machine(), "review_page": page_results,
                      "queries_constant": len({r["queries"] for r in page_results.values()}) == 1, "clock": clock}))


if __name__ == "__main__":
    main()
