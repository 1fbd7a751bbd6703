"""Pausing Python's cyclic garbage collector around work that builds many
containers and no cycles.

The collector runs every few hundred new containers and, every so often, looks
at all the older ones too: parsing a large JSON body or shaping a large lineage
graph triggered dozens of passes that found nothing to free (reference counting
frees what such work drops). Pausing it for the few milliseconds the work takes
is what msgpack's unpacker does for the same reason.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(when: bool = True) -> Iterator[None]:
    """Within the block, no cyclic collection (when `when`); the collector is
    left as it was found: a caller that paused it already keeps it paused."""
    pause = when and gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if pause:
            gc.enable()
