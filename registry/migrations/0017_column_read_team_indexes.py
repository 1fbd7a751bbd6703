"""A team's readings page finds the team's column reads from the team's side: by job
(namespace, name) and by the token's team. Without these it attributed every current
column read of the registry on each view.

On a large existing table each CREATE INDEX blocks the ingest's writes to
registry_columnread while it runs: docs/operations.md says how to build them
CONCURRENTLY first (this migration then finds them and does nothing).
"""

from django.db import migrations, models

JOB_INDEX = "CREATE INDEX IF NOT EXISTS column_read_job_idx ON registry_columnread (job_namespace, job_name)"
TOKEN_TEAM_INDEX = ("CREATE INDEX IF NOT EXISTS column_read_token_team_idx ON registry_columnread (token_team_id) "
                    "WHERE token_team_id IS NOT NULL")


class Migration(migrations.Migration):

    dependencies = [
        ('registry', '0016_reader_input_schemas'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(JOB_INDEX, "DROP INDEX IF EXISTS column_read_job_idx"),
                migrations.RunSQL(TOKEN_TEAM_INDEX, "DROP INDEX IF EXISTS column_read_token_team_idx"),
            ],
            state_operations=[
                migrations.AddIndex(
                    model_name='columnread',
                    index=models.Index(fields=['job_namespace', 'job_name'], name='column_read_job_idx'),
                ),
                migrations.AddIndex(
                    model_name='columnread',
                    index=models.Index(condition=models.Q(('token_team__isnull', False)), fields=['token_team'],
                                       name='column_read_token_team_idx'),
                ),
            ],
        ),
    ]
