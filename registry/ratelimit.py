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
The API's other writes with a bearer token (POST, PUT, PATCH, DELETE through
DRF) spend the same budget, charged their Content-Length when the token is
authenticated, before the body is parsed.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from django.conf import settings
from rest_framework import exceptions

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


class RateLimited(exceptions.Throttled):
    """The API's 429 for a token past its budget: DRF sets Retry-After from `wait`;
    registry.api.errors answers `extra` beside detail and code."""

    default_code = "rate_limited"

    def __init__(self, over: OverBudget):
        super().__init__(wait=over.retry_after, detail=over_budget_message(over), code="rate_limited")
        self.message = over_budget_message(over)
        self.extra = over_budget_fields(over)


def over_budget_message(over: OverBudget) -> str:
    return (f"This token has sent more than its budget of request bytes ({over.burst} bytes at once, then "
            f"{over.rate} bytes/s, LINEAGE_TOKEN_BYTES_PER_SECOND); retry after {over.retry_after} s.")


def over_budget_fields(over: OverBudget) -> dict:
    return {"limit": "LINEAGE_TOKEN_BYTES_PER_SECOND", "allowed": over.rate, "burst": over.burst,
            "retry_after": over.retry_after}


def charge_token_bytes(key: str, size: int) -> None:
    """Charge `size` bytes to the token hashed as `key` under LINEAGE_TOKEN_BYTES_PER_SECOND and
    LINEAGE_TOKEN_BURST_BYTES; OverBudget when its bucket is empty."""
    BUCKETS.charge(key, size, rate=settings.LINEAGE_TOKEN_BYTES_PER_SECOND, burst=settings.LINEAGE_TOKEN_BURST_BYTES)
