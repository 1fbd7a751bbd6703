from contracts_app.models.change_requests import (
    ChangeRequest,
    ChangeRequestState,
    Notification,
    ReviewPolicy,
    ReviewStatus,
    TeamReview,
)
from contracts_app.models.contracts import (
    AuditAction,
    ContentChanged,
    Contract,
    ContractVersion,
    DatasetBinding,
    IntegrationSpec,
    SchemaType,
    VersionInUse,
    document_checksum,
)
from contracts_app.models.drift import SchemaDriftCheck

__all__ = [
    "AuditAction", "ChangeRequest", "ChangeRequestState", "ContentChanged", "Contract", "ContractVersion",
    "DatasetBinding", "IntegrationSpec", "Notification", "ReviewPolicy", "ReviewStatus", "SchemaDriftCheck",
    "SchemaType", "TeamReview", "VersionInUse", "document_checksum",
]
