"""System checks that warn when a production piece is missing (ids registry.W00x)."""

from django.conf import settings
from django.core.checks import Tags, Warning, register


@register()
def production_pieces(app_configs, **kwargs):
    if settings.DEBUG:  # the embedded demo is allowed its shortcuts
        return []
    problems = []
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        problems.append(Warning(
            "DATABASE_URL points at SQLite, which serves the embedded demo only.",
            hint="Set DATABASE_URL=postgres://user:pass@host:5432/registry.", id="registry.W001"))
    if not settings.CELERY_BROKER_URL:
        problems.append(Warning(
            "CELERY_BROKER_URL is not set: tasks run in-process, and freshness deadlines are only evaluated by runserver's in-process evaluator or `manage.py evaluate_freshness --loop`.",
            hint="Set CELERY_BROKER_URL=redis://host:6379/0 and run a worker and beat.", id="registry.W002"))
    if not settings.CONTRACT_STORE.is_s3:
        problems.append(Warning(
            "CONTRACT_STORE is a local directory; pipelines on other machines cannot read it.",
            hint="Set CONTRACT_STORE=s3://bucket/prefix (and S3_ENDPOINT_URL for a non-AWS server).", id="registry.W003"))
    if not settings.METRICS_TOKEN:
        problems.append(Warning(
            "METRICS_TOKEN is not set: /metrics answers 403, so Prometheus cannot scrape the freshness series.",
            hint="Set METRICS_TOKEN and give Prometheus the same value as its bearer credentials.", id="registry.W007"))
    if settings.EMAIL_BACKEND.endswith(("console.EmailBackend", "locmem.EmailBackend", "dummy.EmailBackend")):
        problems.append(Warning(
            "EMAIL_BACKEND does not send mail: consumer teams will not hear of change requests.",
            hint="Set EMAIL_BACKEND and EMAIL_HOST.", id="registry.W004"))
    return problems


@register()
def debug_secret(app_configs, **kwargs):
    if settings.DEBUG and settings.SECRET_KEY == "demo-only-insecure-secret-key" and not settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        return [Warning("The demo SECRET_KEY is in use with a real database.", hint="Set SECRET_KEY.", id="registry.W005")]
    return []


@register(Tags.security, deploy=True)
def serving_role_owns_the_audit_log(app_configs, **kwargs):
    """The role the app serves as must not own the audit table (registry/dbroles.py)."""
    from django.db import connection

    from registry.dbroles import serving_role_problem

    problem = serving_role_problem(connection)
    if not problem:
        return []
    return [Warning(
        f"{problem}: it can disable the audit log's triggers and then change or delete audit rows.",
        hint="Run migrations as the owner role with DATABASE_SERVING_ROLE set, and serve with a DATABASE_URL "
             "for that role (docs/operations.md, \"Database roles\").", id="registry.W006")]
