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
    "AuditAction", "ContentChanged", "Contract", "ContractVersion", "DatasetBinding", "IntegrationSpec",
    "SchemaType", "VersionInUse", "document_checksum",
]
