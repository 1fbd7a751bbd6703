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

__all__ = [
    "AuditAction", "ChangeRequest", "ChangeRequestState", "ContentChanged", "Contract", "ContractVersion",
    "DatasetBinding", "IntegrationSpec", "Notification", "ReviewPolicy", "ReviewStatus", "SchemaType",
    "TeamReview", "VersionInUse", "document_checksum",
]
