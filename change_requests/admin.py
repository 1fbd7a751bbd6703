"""Django admin for change requests: governance admins read them, take the transitions
open to them, set per-dataset review periods and watch notifications.

The transitions come from django-fsm-2's own admin (django_fsm.admin.FSMAdminMixin: the
buttons offered are the ones the state machine allows the viewer), but each one is
carried out by the same public method the review page and the API call, so it keeps
its row lock, its permission rule, its reason and its audit row."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils.html import format_html_join
from django_fsm.admin import FSMAdminMixin

from change_requests.models import (
    ChangeRequest,
    Notification,
    ReviewPolicy,
    TeamChannel,
    TeamReview,
)
from registry.admin import AuditedDeleteAdmin


class CommentForm(forms.Form):
    comment = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=5000,
                              help_text="Optional: kept on the request and in the audit log.")


class RejectForm(forms.Form):
    comment = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), max_length=5000,
        error_messages={"required": "A rejection needs a comment saying why."},
        help_text="Why it is rejected: the owner team and the consumer teams read it.")


class PublishForm(forms.Form):
    """Nothing to ask: the page names the version that gets recorded."""


@dataclass(frozen=True)
class Step:
    """A transition as the admin offers it: its button, who may take it, and the public
    method that takes it."""

    label: str
    who: str
    form: type[forms.Form]
    run: Callable[..., object]


STEPS: dict[str, Step] = {
    "_approve_over_silence": Step(
        "Approve over silent teams", "a governance admin, once the deadline passed and no team objects",
        CommentForm, lambda cr, user, comment="": cr.approve_over_silence(by=user, comment=comment)),
    "_reject": Step("Reject", "a governance admin, with a reason", RejectForm,
                    lambda cr, user, comment: cr.reject(by=user, comment=comment)),
    "_withdraw": Step("Withdraw", "the owner team", CommentForm,
                      lambda cr, user, comment="": cr.withdraw(by=user, comment=comment)),
    "_publish": Step("Publish", "the owner team, once approved", PublishForm,
                     lambda cr, user: cr.publish(by=user)),
    "_approve_by_acknowledgement": Step(
        "Approval by acknowledgement", "nobody: it follows the last required team's acknowledgement",
        PublishForm, lambda cr, user: None),
}
OFFERED = {name for name in STEPS if name != "_approve_by_acknowledgement"}


class TeamReviewInline(admin.TabularInline):
    model = TeamReview
    extra = 0
    can_delete = False
    fields = ["team", "status", "comment", "responded_by_label", "responded_at"]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("team")

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ChangeRequest)
class ChangeRequestAdmin(FSMAdminMixin, admin.ModelAdmin):
    list_display = ["id", "contract", "proposed_version", "state", "deadline_at", "escalated_at", "opened_by_label"]
    list_filter = ["state"]
    search_fields = ["contract__name", "proposed_version"]
    list_select_related = ["contract"]
    inlines = [TeamReviewInline]
    # The state heads the page (the template), with the steps open to the viewer.
    fields = ["next_steps", *(f.name for f in ChangeRequest._meta.concrete_fields if f.name not in {"id", "state"})]
    readonly_fields = fields
    fsm_fields = ["state"]
    fsm_forms = {name: step.form for name, step in STEPS.items()}
    change_form_template = "admin/change_requests/changerequest/change_form.html"
    fsm_transition_form_template = "admin/change_requests/changerequest/transition_form.html"

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_queryset(self, request):
        # The versions' names read their contract's.
        return super().get_queryset(request).select_related(
            "contract", "owner_team", "base_version__contract", "published_version__contract", "opened_by")

    @admin.display(description="Next steps")
    def next_steps(self, obj: ChangeRequest):
        steps = [(STEPS[t.name].label, t.target, STEPS[t.name].who) for t in obj.get_all_state_transitions()
                 if t.source == obj.state and t.name in STEPS]
        if not steps:
            return f"None: a {obj.get_state_display().lower()} request is finished."
        return format_html_join("", "<div>{} → {}: {}</div>", steps)

    # django-fsm-2's admin, shaped to the product.

    def is_fsm_transition_visible(self, transition) -> bool:
        return transition.name in OFFERED

    def get_fsm_label(self, transition) -> str:
        return STEPS[transition.name].label if transition.name in STEPS else transition.name

    def get_help_text(self, transition) -> str | None:
        return f"For {STEPS[transition.name].who}." if transition.name in STEPS else None

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # Every field is read-only: the state changes through the transitions, never a save.
        return super().change_view(request, object_id, form_url, {
            **(extra_context or {}), "show_save": False, "show_save_and_continue": False,
            "show_save_and_add_another": False, "show_delete": False})

    def save_model(self, request, obj, form, change) -> None:
        """Nothing to save (every field is read-only); a forged POST writes nothing."""

    def fsm_transition_view(self, request, object_id, transition_name, **kwargs):
        if transition_name not in OFFERED or not self.has_change_permission(request):
            raise PermissionDenied(f"No such step for a change request: {transition_name}.")
        return super().fsm_transition_view(request, object_id, transition_name, **kwargs)

    def _apply_fsm_transition(self, *, obj, transition_name, request, kwargs=None) -> bool:
        """Take the step through the product's public method (lock, rule, audit row), not by
        calling the bare transition and saving, which is what the library does."""
        try:
            STEPS[transition_name].run(obj, request.user, **(kwargs or {}))
        except (ValidationError, PermissionDenied) as exc:
            self.message_user(request, " ".join(getattr(exc, "messages", None) or [str(exc)]), messages.ERROR)
            return False
        self.message_user(request, f"Change request #{obj.pk} is now {obj.get_state_display().lower()}.",
                          messages.SUCCESS)
        return True


@admin.register(ReviewPolicy)
class ReviewPolicyAdmin(AuditedDeleteAdmin):
    list_display = ["dataset", "review_period"]
    search_fields = ["dataset__namespace", "dataset__name"]
    autocomplete_fields = ["dataset"]


@admin.register(Notification)
class NotificationAdmin(AuditedDeleteAdmin):
    list_display = ["id", "change_request", "event", "channel", "recipient", "sent_at", "attempts", "gave_up_at"]
    list_filter = ["event", "channel"]
    search_fields = ["recipient"]
    readonly_fields = [f.name for f in Notification._meta.concrete_fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(TeamChannel)
class TeamChannelAdmin(AuditedDeleteAdmin):
    """Where each team hears about change requests besides its members' e-mail."""

    list_display = ["team", "kind", "recipient", "created_at"]
    list_filter = ["kind"]
    search_fields = ["team__name", "team__slug"]
    autocomplete_fields = ["team"]
