from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("change_requests", "0005_inbox_digest"),
        ("change_requests", "0005_verdicts_and_verification"),
    ]

    operations = []
