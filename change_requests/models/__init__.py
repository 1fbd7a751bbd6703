from change_requests.models.notifications import (
    Notification,
    NotificationEvent,
    NotificationQuerySet,
    TeamChannel,
)
from change_requests.models.requests import (
    ChangeRequest,
    ChangeRequestAction,
    ChangeRequestError,
    ChangeRequestState,
    NotRequiredTeam,
    ReviewPolicy,
    ReviewStatus,
    TeamReview,
    UnfinishedRequestExists,
)

__all__ = [
    "ChangeRequest", "ChangeRequestAction", "ChangeRequestError", "ChangeRequestState", "NotRequiredTeam",
    "Notification", "NotificationEvent", "NotificationQuerySet", "ReviewPolicy", "ReviewStatus", "TeamChannel",
    "TeamReview", "UnfinishedRequestExists",
]
