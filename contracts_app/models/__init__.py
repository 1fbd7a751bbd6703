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
    version_of,
)
from contracts_app.models.drift import SchemaDriftCheck

__all__ = [
    "AuditAction", "ContentChanged", "Contract", "ContractVersion", "DatasetBinding", "IntegrationSpec",
    "SchemaDriftCheck", "SchemaType", "VersionInUse", "document_checksum", "version_of",
]
