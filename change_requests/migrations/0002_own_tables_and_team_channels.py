"""The tables take this app's names; a team's webhook becomes a notification channel.

1. Rename the four tables (their rows, indexes and constraints go with them).
2. Team channels: each team's `webhook_url` / `webhook_secret` (on the core's Team
   until now) becomes a TeamChannel of kind "webhook"; registry's next migration
   drops the columns, so this runs before it.
3. Content types (and so permissions) of the moved models follow them here.
4. ChangeRequest.proposed_json_schema was never filled: dropped.
"""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

MOVED = ["changerequest", "notification", "reviewpolicy", "teamreview"]


def webhooks_to_channels(apps, schema_editor):
    Team = apps.get_model("registry", "Team")
    TeamChannel = apps.get_model("change_requests", "TeamChannel")
    TeamChannel.objects.bulk_create([
        TeamChannel(team_id=team.pk, kind="webhook", settings={"url": team.webhook_url, "secret": team.webhook_secret})
        for team in Team.objects.exclude(webhook_url="").order_by("pk")
    ])
    # Rows already queued for a webhook keep their signing secret.
    Notification = apps.get_model("change_requests", "Notification")
    for channel in TeamChannel.objects.filter(kind="webhook"):
        Notification.objects.filter(channel="webhook", team_id=channel.team_id,
                                    recipient=channel.settings["url"]).update(team_channel=channel)


def channels_to_webhooks(apps, schema_editor):
    Team = apps.get_model("registry", "Team")
    TeamChannel = apps.get_model("change_requests", "TeamChannel")
    for channel in TeamChannel.objects.filter(kind="webhook").order_by("-pk"):
        Team.objects.filter(pk=channel.team_id).update(
            webhook_url=channel.settings.get("url", ""), webhook_secret=channel.settings.get("secret", ""))


def move_content_types(apps, schema_editor, old="contracts_app", new="change_requests"):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label=old, model__in=MOVED).update(app_label=new)


def move_content_types_back(apps, schema_editor):
    move_content_types(apps, schema_editor, old="change_requests", new="contracts_app")


class Migration(migrations.Migration):

    dependencies = [
        ('change_requests', '0001_initial'),
        ('contracts_app', '0005_change_requests_move_out'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('registry', '0002_audit_append_only'),
    ]
    run_before = [
        ('registry', '0003_team_webhook_moves_to_change_requests'),
    ]

    operations = [
        migrations.AlterModelTable(name='changerequest', table=None),
        migrations.AlterModelTable(name='notification', table=None),
        migrations.AlterModelTable(name='reviewpolicy', table=None),
        migrations.AlterModelTable(name='teamreview', table=None),
        migrations.RemoveField(model_name='changerequest', name='proposed_json_schema'),
        migrations.CreateModel(
            name='TeamChannel',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(help_text='A transport: email, webhook.', max_length=20)),
                ('settings', models.JSONField(blank=True, default=dict, help_text='The transport\'s settings, e.g. {"url": …, "secret": …} for a webhook.')),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('team', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='notification_channels', to='registry.team')),
            ],
            options={
                'ordering': ['team__name', 'kind', 'id'],
            },
        ),
        migrations.AlterField(
            model_name='notification',
            name='channel',
            field=models.CharField(help_text='The transport that sends it (its kind).', max_length=20),
        ),
        migrations.AddField(
            model_name='notification',
            name='team_channel',
            field=models.ForeignKey(blank=True, help_text='The team channel it goes to (None: a person\'s own e-mail).', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='change_requests.teamchannel'),
        ),
        migrations.RunPython(webhooks_to_channels, channels_to_webhooks),
        migrations.RunPython(move_content_types, move_content_types_back),
    ]
