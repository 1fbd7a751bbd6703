"""A module imported on the first use of one of its names.

sqlglot, the compatibility checker's formats and psycopg each cost a noticeable part of
a second to import, and most processes (a `manage.py` command, a web worker serving a
page) never call them. A module-level `exp = LazyModule("sqlglot.expressions")` reads
like the import it replaces; the real import happens on the first `exp.Column`.
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    def __init__(self, name: str) -> None:
        self.__dict__["_name"] = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = getattr(importlib.import_module(self._name), attr)
        self.__dict__[attr] = value  # later uses are plain attribute reads
        return value

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"
