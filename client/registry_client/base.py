"""Base models that set the validation posture of every contract in one place."""

from __future__ import annotations

import pandera.pandas as pa

__all__ = ["BaseDataFrameSchema", "SourceSystemSchema"]


class BaseDataFrameSchema(pa.DataFrameModel):
    """Columns not in the contract are dropped (``strict='filter'``); values are coerced to the declared dtype."""

    class Config:
        strict = "filter"
        coerce = True


class SourceSystemSchema(BaseDataFrameSchema):
    """For data straight from a source system: invalid rows are dropped instead of failing the whole frame."""

    class Config:
        strict = "filter"
        coerce = True
        drop_invalid_rows = True
