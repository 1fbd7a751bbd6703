from contracts_app.models.change_requests import (
    ChangeRequest,
    ChangeRequestState,
    Notification,
    ReviewPolicy,
    ReviewStatus,
    TeamReview,
)
from contracts_app.models.contracts import (
    Contract,
    ContractVersion,
    DatasetBinding,
    IntegrationSpec,
)

__all__ = [
    "ChangeRequest", "ChangeRequestState", "Contract", "ContractVersion", "DatasetBinding", "IntegrationSpec",
    "Notification", "ReviewPolicy", "ReviewStatus", "TeamReview",
]
