"""Failed logins are limited; pages carry a Content-Security-Policy; the production
configuration passes `check --deploy` (issue 15, point 14)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.conf import settings
from django.utils import timezone

from registry.auth import login_client_ip

pytestmark = pytest.mark.django_db

ROOT = Path(settings.BASE_DIR)


def log_in(client, username: str, password: str, *, path: str = "/login/", address: str = "198.51.100.7"):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def is_logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_wrong_passwords_lock_the_login_even_for_the_right_one(client, owner):
    answers = [log_in(client, "alice", f"guess-{i}").status_code for i in range(settings.AXES_FAILURE_LIMIT)]
    assert answers[:-1] == [200] * (settings.AXES_FAILURE_LIMIT - 1)  # the form again, "didn't match"
    assert answers[-1] == 429

    right = log_in(client, "alice", "pw")

    assert right.status_code == 429
    assert "Too many failed logins" in right.content.decode()
    assert not is_logged_in(client)


def test_the_lockout_is_per_username_and_address(client, owner, teammate):
    for i in range(settings.AXES_FAILURE_LIMIT):
        log_in(client, "alice", f"guess-{i}")
    assert log_in(client, "bob", "pw").status_code == 302  # another person from the same address
    client.logout()
    assert log_in(client, "alice", "pw", address="203.0.113.9").status_code == 302  # alice from elsewhere


def test_a_success_resets_the_count(client, owner):
    for i in range(settings.AXES_FAILURE_LIMIT - 1):
        log_in(client, "alice", f"guess-{i}")
    assert log_in(client, "alice", "pw").status_code == 302
    client.logout()
    for i in range(settings.AXES_FAILURE_LIMIT - 1):
        assert log_in(client, "alice", f"again-{i}").status_code == 200
    assert log_in(client, "alice", "pw").status_code == 302


def test_the_lockout_lifts_after_the_cool_off(client, owner):
    for i in range(settings.AXES_FAILURE_LIMIT):
        log_in(client, "alice", f"guess-{i}")
    with time_machine.travel(timezone.now() + settings.AXES_COOLOFF_TIME + timedelta(seconds=1)):
        assert log_in(client, "alice", "pw").status_code == 302


def test_the_admin_login_is_limited_too(client, admin):
    for i in range(settings.AXES_FAILURE_LIMIT):
        log_in(client, "gina", f"guess-{i}", path="/admin/login/")
    assert log_in(client, "gina", "pw", path="/admin/login/").status_code == 429
    assert not is_logged_in(client)


def test_behind_a_proxy_the_address_is_the_last_one_it_appended(rf, settings):
    settings.LOGIN_CLIENT_IP_HEADER = "HTTP_X_FORWARDED_FOR"
    request = rf.get("/", HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7", REMOTE_ADDR="10.0.0.2")
    assert login_client_ip(request) == "198.51.100.7"  # the client wrote 1.2.3.4 itself
    settings.LOGIN_CLIENT_IP_HEADER = ""
    assert login_client_ip(request) == "10.0.0.2"


# --- Content-Security-Policy ---------------------------------------------------------

def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {d.split()[0]: d.split()[1:] for d in (part.strip() for part in header.split(";")) if d}


def test_pages_allow_scripts_and_styles_from_the_site_only(client, owner, dataset):
    client.force_login(owner)
    for url in ("/", f"/datasets/{dataset.pk}/", "/login/", "/admin/login/"):
        directives = policy(client.get(url))
        assert directives["script-src"] == ["'self'"], url
        assert "'unsafe-inline'" not in directives["style-src"], url
        assert directives["object-src"] == ["'none'"] and directives["frame-ancestors"] == ["'none'"]


def test_the_lineage_graphs_style_element_carries_the_pages_nonce(client, owner, dataset):
    from registry.models import ApiToken
    from tests.lineage.conftest import post, run_event

    secret = ApiToken.issue("airflow", team=dataset.owner_team)[1]
    event = run_event("COMPLETE", inputs=["retail.public.orders"], outputs=["mart.orders"])
    event["inputs"][0]["namespace"] = dataset.namespace
    assert post(client, event, secret).status_code == 201
    client.force_login(owner)

    response = client.get(f"/datasets/{dataset.pk}/")

    [nonce] = re.findall(r'<style nonce="([^"]+)"', response.content.decode())
    assert f"'nonce-{nonce}'" in policy(response)["style-src"]


def test_no_template_has_an_inline_script_handler_or_style_attribute():
    """The policy would block them: behaviour lives in static/js, looks in static/css."""
    offenders = []
    for template in (ROOT / "templates").rglob("*.html"):
        text = template.read_text()
        if re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text) or re.search(r"\son[a-z]+=\"", text) \
                or re.search(r"\sstyle=\"", text) or re.search(r"<style(?![^>]*nonce=)", text):
            offenders.append(str(template.relative_to(ROOT)))
    assert offenders == []


def test_the_api_docs_relax_the_policy_for_themselves_only(client, owner):
    client.force_login(owner)
    docs = client.get("/api/docs/")
    assert docs.status_code == 200 and "'unsafe-inline'" in policy(docs)["style-src"]
    assert client.get("/api/docs/?script").status_code == 200  # Swagger UI's start-up script, as a file
    assert "'unsafe-inline'" in policy(client.get("/api/redoc/"))["script-src"]


# --- check --deploy ------------------------------------------------------------------

PRODUCTION = {
    "DEBUG": "0", "SECRET_KEY": "k" * 20 + "-production-like-secret-" + "x9Q#v2!Lm" * 3,
    "ALLOWED_HOSTS": "registry.example.com", "HTTPS": "1", "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO",
    "DATABASE_URL": "postgres://registry@127.0.0.1:5432/registry", "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
    "CONTRACT_STORE": "s3://contracts/registry", "EMAIL_HOST": "mail.example.com",
    "METRICS_TOKEN": "scraper-" + "m3T#" * 6,
}


def check_deploy(**env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in {*PRODUCTION, "DJANGO_SETTINGS_MODULE", "TEST_DATABASE_URL"}}
    clean.update(env, DJANGO_SETTINGS_MODULE="registry.settings")
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120)


def test_the_production_configuration_passes_check_deploy():
    result = check_deploy(**PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_without_https_check_deploy_names_what_is_missing():
    result = check_deploy(**{**PRODUCTION, "HTTPS": "0"})
    assert result.returncode != 0
    for check in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert check in result.stderr, result.stderr
