"""A request-bytes budget per API token, per server process.

Each request's cost is bounded by the body limits (LINEAGE_MAX_BODY_BYTES and
the per-request budgets); what is left is rate: a token posting large bodies
back to back. Each token has a bucket of LINEAGE_TOKEN_BURST_BYTES, refilled
at LINEAGE_TOKEN_BYTES_PER_SECOND, and every body it sends is charged to it,
refused or not, before the expensive parse when its length is known. A
request is let through while the bucket is not empty (it may then go below
zero: a body is never cut); past that, 429 until it refills above zero.

The buckets live in the process's memory behind one lock: no database or
Redis round trip on the hot path. With N server processes a token gets up to
N times the rate, which is what the limit is for (the cost a token can put
on one process). Keys are SHA-256 hashes of the bearer secret; the least
recently used are forgotten past MAX_KEYS (a forgotten bucket starts full).
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from django.conf import settings

MAX_KEYS = 10_000


class OverBudget(Exception):
    """The token's bucket is empty: `retry_after` whole seconds until it is above zero again."""

    def __init__(self, retry_after: int, rate: int, burst: int):
        super().__init__(f"retry after {retry_after} s")
        self.retry_after, self.rate, self.burst = retry_after, rate, burst


class TokenBuckets:
    """Buckets of bytes by key; `clock` is injectable so tests move time rather than wait for it."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, max_keys: int = MAX_KEYS):
        self.clock, self.max_keys = clock, max_keys
        self._lock = threading.Lock()
        self._levels: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (bytes left, when)
        self._config = (0, 0)

    def charge(self, key: str, size: int, *, rate: int, burst: int) -> None:
        """Take `size` bytes from `key`'s bucket; OverBudget if it is empty. A rate of 0 disables."""
        if rate <= 0 or size <= 0:
            return
        burst = max(burst, 1)
        with self._lock:
            if self._config != (rate, burst):  # the settings changed: every bucket starts full
                self._levels.clear()
                self._config = (rate, burst)
            now = self.clock()
            level, then = self._levels.pop(key, (float(burst), now))
            level = min(float(burst), level + (now - then) * rate)
            if level <= 0:
                self._levels[key] = (level, now)
                raise OverBudget(max(1, math.ceil((1 - level) / rate)), rate, burst)
            self._levels[key] = (level - size, now)
            if len(self._levels) > self.max_keys:
                self._levels.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._levels.clear()


BUCKETS = TokenBuckets()


def charge_token_bytes(key: str, size: int) -> None:
    """Charge `size` bytes to the token hashed as `key` under LINEAGE_TOKEN_BYTES_PER_SECOND and
    LINEAGE_TOKEN_BURST_BYTES; OverBudget when its bucket is empty."""
    BUCKETS.charge(key, size, rate=settings.LINEAGE_TOKEN_BYTES_PER_SECOND, burst=settings.LINEAGE_TOKEN_BURST_BYTES)
