"""The status rule as PostgreSQL functions, for the set-based evaluation pass.

Each is a single SQL expression declared STABLE (timestamptz arithmetic and
format() are stable), which lets the planner inline it: a call per row costs
what the expression costs, not a function call.

They mirror freshness/rules.py (status_for, deadline_for, reason_for,
human_duration) exactly; tests/freshness/test_sql_rule.py holds the two
to the same answers. SQLite (the demo) evaluates with the Python rule.
"""

from django.db import migrations

UP = r"""
CREATE OR REPLACE FUNCTION freshness_status(max_age interval, warn_after interval,
                                            last_write_at timestamptz, at timestamptz)
RETURNS varchar LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN max_age IS NULL THEN 'no_slo'
        WHEN last_write_at IS NULL THEN 'unknown'
        WHEN at - last_write_at >= max_age THEN 'stale'
        WHEN warn_after IS NOT NULL AND at - last_write_at >= warn_after THEN 'warning'
        ELSE 'fresh'
    END
$$;

CREATE OR REPLACE FUNCTION freshness_deadline(status varchar, max_age interval, warn_after interval,
                                              last_write_at timestamptz)
RETURNS timestamptz LANGUAGE sql STABLE AS $$
    SELECT CASE status
        WHEN 'fresh' THEN last_write_at + coalesce(warn_after, max_age)
        WHEN 'warning' THEN last_write_at + max_age
    END
$$;

CREATE OR REPLACE FUNCTION freshness_human_duration(d interval)
RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN d IS NULL THEN '—'
        WHEN trunc(extract(epoch FROM d)) < 60 THEN trunc(extract(epoch FROM d))::bigint || 's'
        ELSE array_to_string((array_remove(ARRAY[
            CASE WHEN trunc(extract(epoch FROM d))::bigint / 86400 > 0
                 THEN (trunc(extract(epoch FROM d))::bigint / 86400) || 'd' END,
            CASE WHEN trunc(extract(epoch FROM d))::bigint % 86400 / 3600 > 0
                 THEN (trunc(extract(epoch FROM d))::bigint % 86400 / 3600) || 'h' END,
            CASE WHEN trunc(extract(epoch FROM d))::bigint % 3600 / 60 > 0
                 THEN (trunc(extract(epoch FROM d))::bigint % 3600 / 60) || 'm' END
        ], NULL))[1:2], ' ')
    END
$$;

CREATE OR REPLACE FUNCTION freshness_reason(status varchar, max_age interval, warn_after interval,
                                            last_write_at timestamptz, at timestamptz)
RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE status
        WHEN 'no_slo' THEN 'no freshness SLO'
        WHEN 'unknown' THEN 'no successful write recorded yet'
        WHEN 'stale' THEN format('last successful write %s ago; the SLO allows %s',
                                 freshness_human_duration(at - last_write_at), freshness_human_duration(max_age))
        WHEN 'warning' THEN format('last successful write %s ago; warning after %s',
                                   freshness_human_duration(at - last_write_at), freshness_human_duration(warn_after))
        ELSE format('last successful write %s ago, within %s',
                    freshness_human_duration(at - last_write_at), freshness_human_duration(max_age))
    END
$$;
"""

DOWN = """
DROP FUNCTION IF EXISTS freshness_reason(varchar, interval, interval, timestamptz, timestamptz);
DROP FUNCTION IF EXISTS freshness_human_duration(interval);
DROP FUNCTION IF EXISTS freshness_deadline(varchar, interval, interval, timestamptz);
DROP FUNCTION IF EXISTS freshness_status(interval, interval, timestamptz, timestamptz);
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(UP, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DOWN, params=None)


class Migration(migrations.Migration):
    dependencies = [("freshness", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
