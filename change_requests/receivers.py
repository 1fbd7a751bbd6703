"""Change requests listen to the publish gate's announcement of a breaking version."""

from __future__ import annotations

from django.dispatch import receiver

from change_requests.workflows import propose_breaking_version
from contracts_app.hooks import breaking_version_proposed


@receiver(breaking_version_proposed, dispatch_uid="change_requests.on_breaking_version_proposed")
def on_breaking_version_proposed(sender, *, contract, document, report, by, **kwargs):
    return propose_breaking_version(contract, document, report, by=by)
