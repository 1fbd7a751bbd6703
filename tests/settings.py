"""Test settings: the production settings module, fed a test environment.

PostgreSQL is the engine under test; TEST_DATABASE_URL may point elsewhere.
"""

import os

os.environ.setdefault("DATABASE_URL", os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/registry"))
os.environ.setdefault("SECRET_KEY", "tests-only-secret")
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("ALLOWED_HOSTS", "testserver,127.0.0.1,localhost")

from registry.settings import *  # noqa: E402,F403

METRICS_TOKEN = "tests-metrics-token"  # noqa: S105 - tests only
METRICS_CACHE_SECONDS = 0  # every scrape reads the database afresh (a test turns the cache on)
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; tests only
# A worker started by a test may write its mail to files (TEST_EMAIL_BACKEND) for the test to read.
EMAIL_BACKEND = os.environ.get("TEST_EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":  # noqa: F405
    DATABASES["default"]["ENGINE"] = "tests.pg_backend"  # noqa: F405
