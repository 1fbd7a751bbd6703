from django.db import models


class CompatibilityMode(models.TextChoices):
    """Confluent Schema Registry's names, so people who know one know the other."""

    NONE = "NONE", "None"
    BACKWARD = "BACKWARD", "Backward"
    BACKWARD_TRANSITIVE = "BACKWARD_TRANSITIVE", "Backward transitive"
    FORWARD = "FORWARD", "Forward"
    FORWARD_TRANSITIVE = "FORWARD_TRANSITIVE", "Forward transitive"
    FULL = "FULL", "Full"
    FULL_TRANSITIVE = "FULL_TRANSITIVE", "Full transitive"


class AuditAction:
    DATASET_CLAIMED = "dataset.claimed"
    DATASET_OWNER_CHANGED = "dataset.owner_changed"
    CONSUMER_REGISTERED = "consumer.registered"
    CONSUMER_UNREGISTERED = "consumer.unregistered"
    CONSUMER_COLUMNS_DECLARED = "consumer.columns_declared"
    NAMESPACE_MAPPED = "namespace.mapped"
    NAMESPACE_UNMAPPED = "namespace.unmapped"
    TOKEN_CREATED = "token.created"
    TOKEN_REVOKED = "token.revoked"
    DATASET_DELETED = "dataset.deleted"
    # Any other row a governance admin deleted in the Django admin, with its last values.
    DELETED_IN_ADMIN = "admin.deleted"
