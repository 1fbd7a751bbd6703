from contracts_app.models.contracts import (
    Contract,
    ContractVersion,
    DatasetBinding,
    IntegrationSpec,
)

__all__ = ["Contract", "ContractVersion", "DatasetBinding", "IntegrationSpec"]
