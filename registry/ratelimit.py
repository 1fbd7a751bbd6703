"""A request-bytes budget per API token, shared by every server process.

Each request's cost is bounded by the body limits (LINEAGE_MAX_BODY_BYTES and
the per-request budgets); what is left is rate: a token posting large bodies
back to back. Each token has two buckets:

- its bytes: LINEAGE_TOKEN_BURST_BYTES, refilled at LINEAGE_TOKEN_BYTES_PER_SECOND,
  charged with every body it sends (refused or not) before the expensive parse
  when its length is known, and with LINEAGE_TOKEN_NEW_DATASET_BYTES for each
  dataset its events created (a row, an audit row and a signal: some
  milliseconds, what a body of that size costs to read) once they are stored;
- its refused bytes: LINEAGE_TOKEN_REFUSED_BURST_BYTES, refilled at
  LINEAGE_TOKEN_REFUSED_BYTES_PER_SECOND, charged with the bytes the server read
  of bodies it then refused as unreadable or too large (400, 413). A pipeline
  never sends many of those: its events are JSON a client library wrote. Retrying
  such a body cannot succeed, and each costs the server as much as an accepted one.

A request is let through while both buckets are above zero (the bytes bucket may
then go below zero: a body is never cut); past that, 429 until both are above
zero again. A request refused with 429 is charged its length too: a client that
keeps sending without waiting for Retry-After stays refused for as long as it
keeps on, and each of its requests is answered before its body is read, and late
(RefusalHold: up to LINEAGE_TOKEN_REFUSAL_HOLD_MS, in a bounded number of threads). A
bucket's debt is floored at minus its burst, so a client that stops is let in
again within burst / rate seconds.

The buckets are shared by the server processes through Redis when
LINEAGE_TOKEN_BUDGET_REDIS_URL is set (it defaults to a Redis CELERY_BROKER_URL):
N processes do not give a token N times the rate. The hot path makes no Redis
round trip per request: each process keeps a mirror of every token's levels and
the charges it has not pushed yet, and pushes them (one script call) once they
pass SYNC_BYTES or SYNC_SECONDS, for a large body at once, and at the first
request of a token it has not seen. A mirror refills as
the shared bucket does, so it is never below the shared level minus the charges
of other processes since the last push: a refusal is always right, and a token
can overshoot by at most SYNC_BYTES per process. If Redis cannot be reached the
mirror is the budget (per process, as without Redis) until it can.

Keys are SHA-256 hashes of the bearer secret; a process forgets the least
recently used past MAX_KEYS (a forgotten bucket starts full, or from Redis's
level). The API's other writes with a bearer token (POST, PUT, PATCH, DELETE
through DRF) spend the same budget, charged their Content-Length when the token
is authenticated, before the body is parsed.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from rest_framework import exceptions

log = logging.getLogger(__name__)

MAX_KEYS = 10_000
# A process pushes its charges to the shared buckets once they add up to this many
# bytes, or are this old: some 40 well-formed events, or a tenth of a second.
SYNC_BYTES = 64 * 1024
SYNC_SECONDS = 0.1
# After Redis fails, the buckets stay per process this long before it is asked again.
REDIS_RETRY_SECONDS = 5.0
KEY_PREFIX = "registry:token-budget:"

BYTES_LIMIT = "LINEAGE_TOKEN_BYTES_PER_SECOND"
REFUSED_LIMIT = "LINEAGE_TOKEN_REFUSED_BYTES_PER_SECOND"


@dataclass(frozen=True)
class Limits:
    rate: int
    burst: int
    refused_rate: int
    refused_burst: int

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(settings.LINEAGE_TOKEN_BYTES_PER_SECOND, max(1, settings.LINEAGE_TOKEN_BURST_BYTES),
                   settings.LINEAGE_TOKEN_REFUSED_BYTES_PER_SECOND, max(1, settings.LINEAGE_TOKEN_REFUSED_BURST_BYTES))


class OverBudget(Exception):
    """A bucket of the token's is empty: `retry_after` whole seconds until both are above zero;
    `limit` names the setting of the bucket that refused, `rate` and `burst` are its values."""

    def __init__(self, retry_after: int, rate: int, burst: int, limit: str = BYTES_LIMIT):
        super().__init__(f"retry after {retry_after} s")
        self.retry_after, self.rate, self.burst, self.limit = retry_after, rate, burst, limit


class _Level:
    """A token's buckets as this process knows them: their levels at `when` (the shared
    ones' at the last push, with Redis), and the charges not pushed yet."""

    __slots__ = ("level", "refused", "when", "pending", "pending_refused", "pushed")

    def __init__(self, limits: Limits, now: float):
        self.level, self.refused, self.when = float(limits.burst), float(limits.refused_burst), now
        self.pending = self.pending_refused = 0.0
        self.pushed = False  # with Redis: whether the levels are the shared ones yet

    def due(self, now: float) -> bool:
        """Whether the charges should be pushed now whatever their size: a token not seen yet,
        or charges kept SYNC_SECONDS."""
        return not self.pushed or now - self.when >= SYNC_SECONDS

    def current(self, limits: Limits, now: float) -> tuple[float, float]:
        """The levels now: refilled since `when`, less the charges not pushed."""
        elapsed = max(0.0, now - self.when)
        level = min(float(limits.burst), self.level + elapsed * limits.rate) - self.pending
        refused = (min(float(limits.refused_burst), self.refused + elapsed * limits.refused_rate) - self.pending_refused
                   if limits.refused_rate > 0 else float(limits.refused_burst))
        return level, refused


# The shared buckets' step, as _Level and TokenBuckets._settle do it in a process:
# refill since `when`, take the pushed charges, then the request's own (refused
# while either bucket is not above zero, and charged all the same), floor each debt.
_SETTLE_LUA = """
local now = tonumber(ARGV[1])
local rate, burst = tonumber(ARGV[2]), tonumber(ARGV[3])
local rrate, rburst = tonumber(ARGV[4]), tonumber(ARGV[5])
local pending, size, prefused = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local s = redis.call('HMGET', KEYS[1], 'level', 'refused', 'when')
local level = tonumber(s[1]) or burst
local refused = tonumber(s[2]) or rburst
local when = tonumber(s[3]) or now
local elapsed = math.max(0, now - when)
level = math.min(burst, level + elapsed * rate) - pending
if rrate > 0 then refused = math.min(rburst, refused + elapsed * rrate) - prefused else refused = rburst end
local admitted = 1
if ARGV[9] == '1' and (level <= 0 or refused <= 0) then admitted = 0 end
level = math.max(level - size, -burst)
refused = math.max(refused, -rburst)
redis.call('HSET', KEYS[1], 'level', tostring(level), 'refused', tostring(refused), 'when', tostring(math.max(now, when)))
redis.call('PEXPIRE', KEYS[1], ARGV[10])
return {admitted, tostring(level), tostring(refused)}
"""


class TokenBuckets:
    """Buckets of bytes by key; `clock` (wall time: processes share it) is injectable so tests
    move time rather than wait for it."""

    def __init__(self, clock: Callable[[], float] = time.time, max_keys: int = MAX_KEYS):
        self.clock, self.max_keys = clock, max_keys
        self._lock = threading.Lock()
        self._levels: OrderedDict[str, _Level] = OrderedDict()
        self._limits: Limits | None = None
        self._redis_url: str | None = None
        self._redis = None
        self._script = None
        self._redis_down_until = 0.0

    # --- what the views call ------------------------------------------------------

    def charge(self, key: str, size: int, *, limits: Limits | None = None, refuse: bool = True) -> None:
        """Take `size` bytes from `key`'s bytes bucket; OverBudget (the bytes charged all the same)
        if either of its buckets is empty and `refuse` (not for work charged once done).
        A rate of 0 turns the budget off."""
        limits = limits or Limits.from_settings()
        if limits.rate <= 0:
            return
        size = max(0, size)
        with self._lock:
            state, now = self._state(key, limits)
            level, refused = state.current(limits, now)
            over = refuse and (level <= 0 or refused <= 0)
            redis = self._shared()
            if redis is None:
                self._settle(state, limits, now, size)
            elif state.due(now) or (not over and state.pending + size >= SYNC_BYTES):
                # A refusal is known from the mirror (never above the shared level): Redis is
                # told of refused requests' bytes at most every SYNC_SECONDS, not once per request.
                # (Redis is asked under the lock: a push is one round trip, bounded by the socket
                # timeouts, and a failure turns the buckets per process for REDIS_RETRY_SECONDS.)
                admitted = self._push(redis, key, state, limits, now, size, check=refuse and not over)
                over = over or (refuse and not admitted)
            else:
                state.pending += size
            if over:
                raise self._over(state, limits, now)

    def charge_refused(self, key: str, size: int, *, limits: Limits | None = None) -> None:
        """Take `size` bytes from `key`'s bucket of refused bodies (no refusal here: the next request sees it)."""
        limits = limits or Limits.from_settings()
        if limits.rate <= 0 or limits.refused_rate <= 0 or size <= 0:
            return
        with self._lock:
            state, now = self._state(key, limits)
            redis = self._shared()
            state.pending_refused += size
            if redis is None:
                self._settle(state, limits, now, 0)
            elif state.pending_refused >= SYNC_BYTES or state.due(now):
                self._push(redis, key, state, limits, now, 0, check=False)

    def clear(self) -> None:
        """Every bucket full again, this process's and the shared ones."""
        with self._lock:
            self._levels.clear()
            redis = self._shared()
            if redis is not None:
                try:
                    for found in redis.scan_iter(match=KEY_PREFIX + "*", count=1000):
                        redis.delete(found)
                except Exception:  # noqa: BLE001 - Redis out of reach: nothing shared to clear
                    pass

    # --- the buckets ---------------------------------------------------------------

    def _state(self, key: str, limits: Limits) -> tuple[_Level, float]:
        if self._limits != limits:  # the settings changed: every bucket starts full
            self._levels.clear()
            self._limits = limits
        now = self.clock()
        state = self._levels.pop(key, None) or _Level(limits, now)
        self._levels[key] = state
        if len(self._levels) > self.max_keys:
            self._levels.popitem(last=False)
        return state, now

    @staticmethod
    def _settle(state: _Level, limits: Limits, now: float, size: int) -> None:
        """This process's step, for the buckets it keeps itself: the Lua script's, in Python."""
        level, refused = state.current(limits, now)
        state.level = max(level - size, -float(limits.burst))
        state.refused = max(refused, -float(limits.refused_burst))
        state.when = max(now, state.when)
        state.pending = state.pending_refused = 0.0

    def _over(self, state: _Level, limits: Limits, now: float) -> OverBudget:
        level, refused = state.current(limits, now)
        waits = []
        if level <= 0:
            waits.append((math.ceil((1 - level) / limits.rate), limits.rate, limits.burst, BYTES_LIMIT))
        if refused <= 0:
            waits.append((math.ceil((1 - refused) / limits.refused_rate), limits.refused_rate, limits.refused_burst,
                          REFUSED_LIMIT))
        wait, rate, burst, limit = max(waits or [(1, limits.rate, limits.burst, BYTES_LIMIT)])
        return OverBudget(max(1, wait), rate, burst, limit)

    # --- shared through Redis ---------------------------------------------------------

    def _shared(self):
        """The Redis client of LINEAGE_TOKEN_BUDGET_REDIS_URL, or None: none set, or out of reach lately."""
        url = settings.LINEAGE_TOKEN_BUDGET_REDIS_URL
        if not url:
            return None
        if url != self._redis_url:
            import redis

            self._redis_url = url
            self._redis = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
            self._script = self._redis.register_script(_SETTLE_LUA)
            self._redis_down_until = 0.0
        if time.monotonic() < self._redis_down_until:
            return None
        return self._redis

    def _push(self, redis, key: str, state: _Level, limits: Limits, now: float, size: int, *, check: bool) -> bool:
        """Push this process's charges and the request's `size` (refused while a bucket is empty,
        if `check`) to the shared buckets; the mirror takes their levels. Whether admitted."""
        ttl_ms = int(1000 * (2 * limits.burst / limits.rate + 60 + (2 * limits.refused_burst / limits.refused_rate
                                                                      if limits.refused_rate > 0 else 0)))
        try:
            admitted, level, refused = self._script(keys=[KEY_PREFIX + key], args=[
                repr(now), limits.rate, limits.burst, limits.refused_rate, limits.refused_burst,
                repr(state.pending), size, repr(state.pending_refused), "1" if check else "0", ttl_ms])
        except Exception as exc:  # noqa: BLE001 - any Redis failure: the budget goes on per process
            self._redis_down_until = time.monotonic() + REDIS_RETRY_SECONDS
            log.warning("token budget: Redis out of reach (%s); buckets per process for %.0f s", exc, REDIS_RETRY_SECONDS)
            self._settle(state, limits, now, 0)
            level, refused = state.current(limits, now)
            self._settle(state, limits, now, size)
            return not check or (level > 0 and refused > 0)
        state.level, state.refused, state.when = float(level), float(refused), now
        state.pending = state.pending_refused = 0.0
        state.pushed = True
        return bool(admitted)


BUCKETS = TokenBuckets()


class RefusalHold:
    """A 429 answered late, as a proxy's rate limit queues excess requests: the server thread
    waits up to LINEAGE_TOKEN_REFUSAL_HOLD_MS (never past Retry-After) before answering, so a
    client that sends again as soon as it is answered, ignoring Retry-After, sends about one
    request a second on each connection, not hundreds; each costs the server a connection and
    an answer, and its upload the machine a copy of the body. At most
    LINEAGE_TOKEN_REFUSAL_HOLD_SLOTS refusals wait at once in a process: past them a 429 is
    answered at once, so many connections of spent tokens cannot take every thread."""

    def __init__(self, sleep: Callable[[float], None] = time.sleep):
        self.sleep = sleep  # injectable, so that tests see the wait rather than wait it
        self._lock = threading.Lock()
        self._slots: tuple[int, threading.BoundedSemaphore] | None = None
        self.held = 0  # refusals held since the process started (the bench and tests read it)

    def hold(self, retry_after: float) -> float:
        """Wait before a 429 whose client may retry in `retry_after` seconds; the seconds waited."""
        seconds = min(settings.LINEAGE_TOKEN_REFUSAL_HOLD_MS / 1000, retry_after)
        if seconds <= 0:
            return 0.0
        slots = self._semaphore(settings.LINEAGE_TOKEN_REFUSAL_HOLD_SLOTS)
        if slots is None or not slots.acquire(blocking=False):
            return 0.0
        try:
            with self._lock:
                self.held += 1
            self.sleep(seconds)
        finally:
            slots.release()
        return seconds

    def _semaphore(self, size: int) -> threading.BoundedSemaphore | None:
        if size <= 0:
            return None
        with self._lock:
            if self._slots is None or self._slots[0] != size:
                self._slots = (size, threading.BoundedSemaphore(size))
            return self._slots[1]


REFUSALS = RefusalHold()


class RateLimited(exceptions.Throttled):
    """The API's 429 for a token past its budget: DRF sets Retry-After from `wait`;
    registry.api.errors answers `extra` beside detail and code."""

    default_code = "rate_limited"

    def __init__(self, over: OverBudget):
        super().__init__(wait=over.retry_after, detail=over_budget_message(over), code="rate_limited")
        self.message = over_budget_message(over)
        self.extra = over_budget_fields(over)


def over_budget_message(over: OverBudget) -> str:
    if over.limit == REFUSED_LIMIT:
        return (f"This token has sent more bodies the registry refused as unreadable or too large than its budget "
                f"({over.burst} bytes at once, then {over.rate} bytes/s, {REFUSED_LIMIT}); fix what sends them, and "
                f"retry after {over.retry_after} s.")
    return (f"This token has sent more than its budget of request bytes ({over.burst} bytes at once, then "
            f"{over.rate} bytes/s, {BYTES_LIMIT}); retry after {over.retry_after} s.")


def over_budget_fields(over: OverBudget) -> dict:
    return {"limit": over.limit, "allowed": over.rate, "burst": over.burst, "retry_after": over.retry_after}


def hold_refusal(over: OverBudget) -> None:
    """Wait before answering the 429 of `over` (RefusalHold)."""
    REFUSALS.hold(over.retry_after)


def charge_token_bytes(key: str, size: int) -> None:
    """Charge `size` bytes to the token hashed as `key` under LINEAGE_TOKEN_BYTES_PER_SECOND and
    LINEAGE_TOKEN_BURST_BYTES; OverBudget when one of its buckets is empty."""
    BUCKETS.charge(key, size)


def charge_work_done(key: str, size: int) -> None:
    """Charge `size` bytes' worth of work a request was let in for and has done (the datasets
    it created) to the token hashed as `key`: its next requests see it, this one is not refused."""
    BUCKETS.charge(key, size, refuse=False)


def charge_refused_bytes(key: str, size: int) -> None:
    """Charge the `size` bytes read of a body refused as unreadable or too large (400, 413) to the
    token hashed as `key`, under LINEAGE_TOKEN_REFUSED_BYTES_PER_SECOND."""
    BUCKETS.charge_refused(key, size)
