from contracts_app.models.contracts import (
    AuditAction,
    ContentChanged,
    Contract,
    ContractVersion,
    DatasetBinding,
    DatasetBoundElsewhere,
    IntegrationSpec,
    SchemaType,
    UnknownOwner,
    VersionInUse,
    datasets_named_in,
    document_checksum,
    field_names,
    is_weaker,
    mode_requirements,
    owner_named_in,
    publisher_refusal,
    version_of,
)
from contracts_app.models.drafts import Draft, DraftAction, DraftOrigin, DraftState
from contracts_app.models.drift import SchemaDriftCheck

__all__ = [
    "AuditAction", "ContentChanged", "Contract", "ContractVersion", "DatasetBinding", "DatasetBoundElsewhere",
    "Draft", "DraftAction", "DraftOrigin", "DraftState",
    "IntegrationSpec", "SchemaDriftCheck", "SchemaType", "UnknownOwner", "VersionInUse", "datasets_named_in",
    "document_checksum", "field_names", "is_weaker", "mode_requirements", "owner_named_in", "publisher_refusal", "version_of",
]
