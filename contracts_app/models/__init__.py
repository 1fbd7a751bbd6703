from contracts_app.models.contracts import (
    Contract,
    ContractVersion,
    DatasetBinding,
    IntegrationSpec,
)
from contracts_app.models.drift import SchemaDriftCheck

__all__ = ["Contract", "ContractVersion", "DatasetBinding", "IntegrationSpec", "SchemaDriftCheck"]
