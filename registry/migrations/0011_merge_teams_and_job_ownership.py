from django.db import migrations


class Migration(migrations.Migration):
    """Teams as data and job ownership were built side by side; this joins the two."""

    dependencies = [
        ("registry", "0009_team_parent_and_member_role"),
        ("registry", "0010_job_teams_and_ownership_rules"),
    ]

    operations = []
