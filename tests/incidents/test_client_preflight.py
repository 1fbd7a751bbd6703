"""The thin client's preflight and its command's exit codes, against a running
registry: 0 safe, 1 not safe, 2 wrong usage, 3 no answer (unreachable, refused)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from registry_client import Registry
from registry_client.backends import HttpBackend, LocalBackend

from registry.models import ApiToken

from .conftest import ALL_PASS, failed, report

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def secret(consumer):
    return ApiToken.issue("nightly job", user=consumer, scopes=["read"])[1]


def command(*args: str, url: str, token: str | None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "client")]), "REGISTRY_URL": url}
    env.pop("REGISTRY_TOKEN", None)
    if token:
        env["REGISTRY_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "registry_client.preflight", *args], env=env, capture_output=True,
                          text=True, timeout=60)


def test_the_client_answers_safe_only_when_the_registry_says_so(live_server, secret, dataset, contract):
    registry = Registry(HttpBackend(live_server.url, secret))
    assert registry.preflight(dataset.name).safe is False  # never evaluated
    report(dataset, ALL_PASS)
    answer = registry.preflight(dataset.name, namespace=dataset.namespace)
    assert answer.safe is True and answer.status == "passing"


def test_a_contract_store_registry_cannot_answer_and_so_is_unsafe(tmp_path):
    answer = Registry(LocalBackend(str(tmp_path))).preflight("orders")
    assert answer.safe is False and not answer.answered and "needs the registry service" in answer.reasons[0]


def test_the_command_exits_0_when_safe_and_1_when_not(live_server, secret, dataset, contract):
    report(dataset, ALL_PASS)
    ok = command(dataset.name, "--columns", "order_id", url=live_server.url, token=secret)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"{dataset.name}: safe (passing)" in ok.stdout

    report(dataset, [*ALL_PASS[1:], failed("not_null", "order_id")], at=__import__("datetime").datetime.now(
        __import__("datetime").UTC))
    bad = command(dataset.name, "--columns", "order_id", url=live_server.url, token=secret)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "NOT SAFE (failing)" in bad.stdout and "incident #" in bad.stdout
    # A job reading only amount is not held back by order_id's incident.
    assert command(dataset.name, "--columns", "amount", url=live_server.url, token=secret).returncode == 0


def test_the_command_exits_1_for_an_unknown_dataset(live_server, secret):
    result = command("no.such.dataset", url=live_server.url, token=secret)
    assert result.returncode == 1 and "knows no dataset" in result.stdout


def test_the_command_exits_3_when_the_registry_cannot_answer(live_server, secret):
    refused = command("orders", url=live_server.url, token="dr_not_a_token")
    assert refused.returncode == 3 and "refused" in refused.stdout
    unreachable = command("orders", url="http://127.0.0.1:9", token=secret)
    assert unreachable.returncode == 3 and "Could not reach" in unreachable.stdout


def test_the_command_exits_2_on_wrong_usage(secret):
    assert command(url="http://127.0.0.1:9", token=secret).returncode == 2
    assert command("orders", url="s3://bucket/prefix", token=secret).returncode == 2
