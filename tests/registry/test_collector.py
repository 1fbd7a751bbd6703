"""The cyclic collector is paused only around work that builds no cycles, and left as it was found."""

from __future__ import annotations

import gc

import pytest

from registry.collector import collector_paused
from registry.jsonbody import parse_json


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_paused_within_the_block_and_running_after(collector_on):
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_block_that_fails_still_leaves_the_collector_running(collector_on):
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("the work failed")
    assert gc.isenabled()


def test_a_collector_paused_by_the_caller_stays_paused(collector_on):
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_when_false_leaves_the_collector_running(collector_on):
    with collector_paused(False):
        assert gc.isenabled()


def test_parsing_a_large_body_leaves_the_collector_running(collector_on):
    assert parse_json(b"[" + b"[]," * 100_000 + b"[]]")[0] == []
    assert gc.isenabled()
