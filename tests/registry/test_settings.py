"""Settings come from the environment and fail loudly on bad values."""

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from registry.env import env_bool, parse_contract_store, parse_database_url, parse_duration

BASE = Path("/srv/registry")


def test_postgres_url_becomes_database_settings():
    db = parse_database_url("postgres://reg:s%40cret@db.internal:5433/registry?sslmode=require", base_dir=BASE)
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["USER"], db["PASSWORD"], db["HOST"], db["PORT"], db["NAME"]) == ("reg", "s@cret", "db.internal", "5433", "registry")
    assert db["OPTIONS"] == {"sslmode": "require"}


def test_sqlite_url_is_relative_to_the_project(tmp_path):
    db = parse_database_url("sqlite:///var/demo.sqlite3", base_dir=tmp_path)
    assert db["NAME"] == str(tmp_path / "var" / "demo.sqlite3")


@pytest.mark.parametrize("url, message", [
    ("mysql://x/y", "scheme 'mysql' is not supported"),
    ("postgres://host:5432/", "names no database"),
    ("postgres://host:notaport/db", "bad port"),
])
def test_bad_database_urls_say_what_is_wrong(url, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        parse_database_url(url, base_dir=BASE)


def test_contract_store_is_s3_or_a_local_directory():
    s3 = parse_contract_store("s3://contracts-bucket/registry/prod", base_dir=BASE)
    assert (s3.kind, s3.bucket, s3.prefix) == ("s3", "contracts-bucket", "registry/prod")
    local = parse_contract_store("var/store", base_dir=BASE)
    assert (local.kind, local.path) == ("local", "/srv/registry/var/store")
    with pytest.raises(ImproperlyConfigured, match="names no bucket"):
        parse_contract_store("s3:///prefix", base_dir=BASE)
    with pytest.raises(ImproperlyConfigured, match="only s3://"):
        parse_contract_store("gs://bucket", base_dir=BASE)


def test_booleans_and_durations_are_strict(monkeypatch):
    monkeypatch.setenv("FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="FLAG='maybe' is not a boolean"):
        env_bool("FLAG")
    assert parse_duration("15s") == timedelta(seconds=15)
    assert parse_duration("7d") == timedelta(days=7)
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration("soon")


def _settings_in_subprocess(**env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG", "DATABASE_URL"}}
    clean.update(env, DJANGO_SETTINGS_MODULE="registry.settings")
    return subprocess.run([sys.executable, "-c", "import django; django.setup(); from django.conf import settings; print(settings.TIME_ZONE)"],
                          cwd=settings.BASE_DIR, env=clean, capture_output=True, text=True)


def test_secret_key_is_required_when_debug_is_off():
    result = _settings_in_subprocess(DEBUG="0", DATABASE_URL="sqlite:///var/x.sqlite3")
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_a_command_without_the_settings_it_needs_says_what_is_missing():
    clean = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG", "DATABASE_URL", "DJANGO_SETTINGS_MODULE"}}
    result = subprocess.run([sys.executable, "manage.py", "makemigrations", "--check", "--dry-run"],
                            cwd=settings.BASE_DIR, env={**clean, "DEBUG": "0"}, capture_output=True, text=True)
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr and "Traceback" not in result.stderr


def test_debug_demo_gets_a_demo_secret_and_utc():
    result = _settings_in_subprocess(DEBUG="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "UTC"


def test_system_checks_warn_about_missing_production_pieces(settings):
    from registry.checks import production_pieces

    settings.DEBUG = False
    settings.CELERY_BROKER_URL = ""
    ids = {w.id for w in production_pieces(None)}
    assert {"registry.W002", "registry.W003"} <= ids


def test_every_variable_the_settings_read_is_documented_in_the_configuration_page():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    source = (root / "registry" / "settings.py").read_text()
    read = set(re.findall(r'env_[a-z_]+\("([A-Z][A-Z0-9_]+)"', source))
    page = (root / "docs" / "configuration.md").read_text()
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", page))
    # The S3 credentials fall back to AWS's names, documented as `AWS_*` beside them.
    undocumented = sorted(name for name in read - documented if not name.startswith("AWS_"))
    assert undocumented == []
