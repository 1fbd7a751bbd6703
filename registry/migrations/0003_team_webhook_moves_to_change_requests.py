"""A team's webhook is a change-request notification channel now (the change_requests
app copies it into its TeamChannel table before this runs)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('registry', '0002_audit_append_only'),
    ]

    operations = [
        migrations.RemoveField(model_name='team', name='webhook_url'),
        migrations.RemoveField(model_name='team', name='webhook_secret'),
    ]
