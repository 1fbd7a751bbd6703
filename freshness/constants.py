from django.db import models


class FreshnessStatus(models.TextChoices):
    FRESH = "fresh", "Fresh"
    WARNING = "warning", "Warning"
    STALE = "stale", "Stale"
    UNKNOWN = "unknown", "Unknown (no successful write yet)"
    NO_SLO = "no_slo", "No SLO"


# Most urgent first: the order of the groups on the dataset list.
STATUS_ORDER = [
    FreshnessStatus.STALE,
    FreshnessStatus.WARNING,
    FreshnessStatus.UNKNOWN,
    FreshnessStatus.FRESH,
    FreshnessStatus.NO_SLO,
]

# The tag colour of each status in templates.
STATUS_CSS = {
    FreshnessStatus.STALE: "bad",
    FreshnessStatus.WARNING: "warn",
    FreshnessStatus.UNKNOWN: "",
    FreshnessStatus.FRESH: "good",
    FreshnessStatus.NO_SLO: "",
}


class TransitionSource(models.TextChoices):
    DEADLINE = "deadline", "Deadline task"
    SWEEP = "sweep", "Beat sweep"
    WRITE = "write", "Successful write"
    SLO_CHANGE = "slo_change", "SLO changed"
    EVALUATOR = "evaluator", "In-process evaluator"


class AuditAction:
    TRANSITION = "freshness.transition"
    SLO_CHANGED = "freshness.slo_changed"


EVALUATOR_ACTOR = "freshness evaluator"
