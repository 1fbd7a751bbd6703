from django.db import migrations


class Migration(migrations.Migration):
    """Identifier validation and sealed audit rows were built beside teams and job ownership; this joins them."""

    dependencies = [
        ("registry", "0011_merge_teams_and_job_ownership"),
        ("registry", "0010_audit_rows_sealed"),
    ]

    operations = []
