"""freshness_human_duration follows freshness.rules.human_duration again: the largest
unit and the next one when it is not zero, seconds included. A 90 s SLO reads
"1m 30s" in the reasons the set-based pass writes, not "1m".

Only the function changes (CREATE OR REPLACE); freshness_reason calls it by name."""

from importlib import import_module

from django.db import migrations

_E = "trunc(extract(epoch FROM d))::bigint"

UP = f"""
CREATE OR REPLACE FUNCTION freshness_human_duration(d interval)
RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN d IS NULL THEN '—'
        WHEN {_E} >= 86400 THEN ({_E} / 86400) || 'd'
            || CASE WHEN {_E} % 86400 / 3600 > 0 THEN ' ' || ({_E} % 86400 / 3600) || 'h' ELSE '' END
        WHEN {_E} >= 3600 THEN ({_E} / 3600) || 'h'
            || CASE WHEN {_E} % 3600 / 60 > 0 THEN ' ' || ({_E} % 3600 / 60) || 'm' ELSE '' END
        WHEN {_E} >= 60 THEN ({_E} / 60) || 'm'
            || CASE WHEN {_E} % 60 > 0 THEN ' ' || ({_E} % 60) || 's' ELSE '' END
        ELSE {_E} || 's'
    END
$$;
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(UP, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        # 0002's functions as they were (CREATE OR REPLACE: the others are unchanged).
        schema_editor.execute(import_module("freshness.migrations.0002_sql_rule").UP, params=None)


class Migration(migrations.Migration):
    dependencies = [("freshness", "0003_constraint_messages_and_names")]
    operations = [migrations.RunPython(forwards, backwards)]
