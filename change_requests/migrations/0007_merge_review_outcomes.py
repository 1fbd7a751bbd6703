from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("change_requests", "0006_merge_inbox_and_verdicts"),
        ("change_requests", "0005_review_outcomes_migrating_and_block_override"),
    ]

    operations = []
