"""jsonschema's `iri` and `iri-reference` format checks, loaded when first used.

jsonschema imports `rfc3987_syntax` when it is installed, and that module builds an
Earley parser from its grammar at import time: seconds of CPU (more on a busy machine)
paid by every process that imports jsonschema, although almost none ever checks an IRI.
`install()` puts a stand-in under that name before jsonschema is imported: jsonschema
finds `is_valid_syntax` as usual, and the real module (and its parser) is imported on
the first IRI checked. What is checked, and how, does not change.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

NAME = "rfc3987_syntax"


class _Standin(types.ModuleType):
    """The name jsonschema imports, until something uses it."""

    _real: types.ModuleType | None = None

    def load(self) -> types.ModuleType:
        if self._real is None:
            if sys.modules.get(NAME) is self:
                del sys.modules[NAME]  # the real package imports its own submodules by name
            self._real = importlib.import_module(NAME)
        return self._real

    def is_valid_syntax(self, term: str, value: str) -> bool:
        return self.load().is_valid_syntax(term, value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.load(), name)


def install() -> None:
    """Put the stand-in in place, once, if the real module is installed and not imported yet."""
    if NAME in sys.modules or importlib.util.find_spec(NAME) is None:
        return
    standin = _Standin(NAME, __doc__)
    # a plain function, so `from rfc3987_syntax import is_valid_syntax` binds one that loads later
    standin.is_valid_syntax = lambda term, value: _Standin.is_valid_syntax(standin, term, value)  # type: ignore[method-assign]
    sys.modules[NAME] = standin
