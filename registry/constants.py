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
    # Teams and people as data (registry.teamsync): a file, the API or the admin.
    TEAM_CREATED = "team.created"
    TEAM_UPDATED = "team.updated"
    TEAM_REMOVED = "team.removed"
    MEMBER_ADDED = "team.member_added"
    MEMBER_ROLE_CHANGED = "team.member_role_changed"
    MEMBER_REMOVED = "team.member_removed"
    CHANNEL_ADDED = "team.channel_added"
    CHANNEL_CHANGED = "team.channel_changed"
    CHANNEL_REMOVED = "team.channel_removed"
    USER_CREATED = "user.created"
    USER_EMAIL_CHANGED = "user.email_changed"
    DBT_OWNER_RECORDED = "dbt_owner.recorded"
    DBT_OWNER_REMOVED = "dbt_owner.removed"
    TEAM_ALIAS_DECLARED = "team.alias_declared"
    TEAM_ALIAS_REMOVED = "team.alias_removed"
    OWNERSHIP_RULES_CHANGED = "ownership_rules.changed"
    CONSUMPTION_CONFIRMED = "consumer.readings_confirmed"
    JOB_CLAIMED = "job.claimed"  # a team member said "this job is ours" (a rules-file line, registry.ownership)
    # Any other row a governance admin deleted in the Django admin, with its last values.
    DELETED_IN_ADMIN = "admin.deleted"


class MembershipRole(models.TextChoices):
    """A person's role in a team. Every member acts for the team alike (acknowledges,
    claims, publishes); a lead is who the team names as its point of contact."""

    MEMBER = "member", "Member"
    LEAD = "lead", "Lead"


class TokenScope(models.TextChoices):
    """What a bearer token may do; a token holds several, stored space-separated
    (as OAuth writes scopes). Lineage writes are scoped by dataset ownership as
    well (registry.auth.LineageWriter)."""

    READ = "read", "read: GET the API"
    WRITE = "write", "write: change the registry over the API (claims, consumers, SLOs, change request answers)"
    CONTRACTS_PUBLISH = "contracts:publish", "contracts:publish: publish contract versions over the API"
    LINEAGE_WRITE = "lineage:write", "lineage:write: post lineage for datasets the token's team owns, or unowned ones"
    LINEAGE_WRITE_ANY = "lineage:write:any", "lineage:write:any: platform-wide ingest, any dataset (admins only)"


# What a token gets unless told otherwise: all it could do before scopes
# existed, less writing lineage for other teams' datasets.
DEFAULT_TOKEN_SCOPES = (TokenScope.READ, TokenScope.WRITE, TokenScope.CONTRACTS_PUBLISH, TokenScope.LINEAGE_WRITE)
