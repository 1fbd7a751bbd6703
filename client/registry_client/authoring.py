"""Everything a contract author imports, in one place::

    from registry_client.authoring import (
        BaseDataFrameSchema, ContractMixin, SchemaMeta, register_dataframe_schema,
    )
"""

from .base import BaseDataFrameSchema, SourceSystemSchema
from .checks import SkippedCheckWarning
from .dtypes import UnknownDtypeError, canonicalize_dtype, is_canonical
from .identity import InvalidIdentityError, SchemaInfo, SchemaMeta
from .mixins import ContractMixin, read_contract_header
from .registration import ContractPathError, register_dataframe_schema, relaxed_registry_checks
from .versions import InvalidVersionError, folder_to_version, version_to_folder

__all__ = [
    "BaseDataFrameSchema",
    "SourceSystemSchema",
    "ContractMixin",
    "SchemaInfo",
    "SchemaMeta",
    "register_dataframe_schema",
    "relaxed_registry_checks",
    "read_contract_header",
    "canonicalize_dtype",
    "is_canonical",
    "folder_to_version",
    "version_to_folder",
    "ContractPathError",
    "InvalidIdentityError",
    "InvalidVersionError",
    "UnknownDtypeError",
    "SkippedCheckWarning",
]
