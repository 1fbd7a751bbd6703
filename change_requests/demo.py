"""Demo step: one breaking change waiting for its consumer team, so the review
page has something to show. Idempotent: nothing is opened twice."""

from __future__ import annotations

import copy

from django.contrib.auth import get_user_model

from change_requests.models import ChangeRequest
from contracts_app.models import Contract
from contracts_app.publishing import publish_document
from registry.hooks import demo_step

DEMO_CONTRACT = "retail.checkout.order_placed"
DEMO_VERSION = "3.0"  # the demo tree itself goes up to 2.0


@demo_step("change requests: publish the approved ones, open one that waits for a consumer team", order=50)
def open_demo_change_request(stdout) -> None:
    # The demo tree's later breaking versions were published before any dataset was bound, so
    # their requests waited for nobody and stand approved; their owners publish them, as on the page.
    published = []
    for request in ChangeRequest.objects.filter(state="approved", reviews__isnull=True).select_related("owner_team", "contract"):
        owner = request.owner_team.members.order_by("username").first() if request.owner_team_id else None
        if owner is not None:
            request.publish(by=owner)
            published.append(f"{request.contract.name} {request.proposed_version}")
    if published:
        stdout.write(f"  change requests published by their owners: {', '.join(published)}\n")

    contract = Contract.objects.filter(name=DEMO_CONTRACT).first()
    latest = contract.latest_version() if contract else None
    # The demo tree's own 2.0 went through an (approved, now published) request too: only ours counts here.
    if latest is None or latest.version == DEMO_VERSION or ChangeRequest.objects.filter(
            contract=contract, proposed_version=DEMO_VERSION).exists():
        stdout.write("  change requests: nothing to open\n")
        return
    document = copy.deepcopy(latest.document)
    document["schema"]["version"] = DEMO_VERSION
    payload = document["payload"]
    payload["properties"]["loyalty_id"] = {"type": "string", "minLength": 1}
    payload["required"] = [*payload.get("required", []), "loyalty_id"]
    author = get_user_model().objects.filter(username="alice").first()
    outcome = publish_document(document, by=author)
    request = outcome.change_request
    if request is not None:
        ChangeRequest.objects.filter(pk=request.pk).update(
            summary="Every order now carries the customer's loyalty id, which the loyalty programme needs.")
    stdout.write(f"  change requests: {outcome.message}\n")
