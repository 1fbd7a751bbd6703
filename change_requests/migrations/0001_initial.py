"""Change requests move out of contracts_app into an app of their own.

The tables stay where they are: these operations only tell Django's migration
state that the models now belong here (the SQL is nothing). The next migration
renames the tables.
"""

import django.db.models.deletion
import django.utils.timezone
import django_fsm
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contracts_app', '0004_schema_drift'),
        ('registry', '0002_audit_append_only'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='ChangeRequest',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('state', django_fsm.FSMField(choices=[('open', 'Open'), ('approved', 'Approved'), ('published', 'Published'), ('rejected', 'Rejected'), ('withdrawn', 'Withdrawn')], default='open', max_length=50)),
                        ('proposed_version', models.CharField(max_length=50)),
                        ('proposed_document', models.JSONField(help_text='The canonical document proposed.')),
                        ('proposed_json_schema', models.JSONField(blank=True, null=True)),
                        ('report', models.JSONField(default=dict, help_text="The compatibility checker's report (to_dict()).")),
                        ('summary', models.TextField(blank=True, help_text='Why the owner wants this change.')),
                        ('opened_by_label', models.CharField(blank=True, max_length=200)),
                        ('opened_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('deadline_at', models.DateTimeField()),
                        ('remind_at', models.DateTimeField(help_text='When the still-waiting teams get a reminder.')),
                        ('reminded_at', models.DateTimeField(blank=True, null=True)),
                        ('escalated_at', models.DateTimeField(blank=True, null=True)),
                        ('approved_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_by_label', models.CharField(blank=True, max_length=200)),
                        ('closing_comment', models.TextField(blank=True, help_text='Why it was rejected or withdrawn.')),
                        ('base_version', models.ForeignKey(blank=True, help_text='The latest published version when the request opened: the left side of the diff.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='contracts_app.contractversion')),
                        ('contract', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='change_requests', to='contracts_app.contract')),
                        ('opened_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('owner_team', models.ForeignKey(help_text='The team that may publish or withdraw, frozen when the request opened.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='owned_change_requests', to='registry.team')),
                        ('published_version', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='contracts_app.contractversion')),
                    ],
                    options={
                        'db_table': 'contracts_app_changerequest',
                        'ordering': ['-opened_at'],
                    },
                ),
                migrations.CreateModel(
                    name='Notification',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('event', models.CharField(choices=[('opened', 'Request opened'), ('reminder', 'Deadline reminder'), ('escalated', 'Escalated after the deadline'), ('approved', 'Approved: ready to publish')], max_length=20)),
                        ('channel', models.CharField(choices=[('email', 'E-mail'), ('webhook', 'Webhook')], max_length=10)),
                        ('recipient', models.CharField(help_text='An e-mail address, or the webhook URL.', max_length=500)),
                        ('subject', models.CharField(max_length=300)),
                        ('body', models.TextField()),
                        ('payload', models.JSONField(default=dict, help_text='The webhook body.')),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('claimed_until', models.DateTimeField(blank=True, null=True)),
                        ('attempts', models.PositiveIntegerField(default=0)),
                        ('last_error', models.TextField(blank=True)),
                        ('sent_at', models.DateTimeField(blank=True, null=True)),
                        ('gave_up_at', models.DateTimeField(blank=True, null=True)),
                        ('change_request', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='notifications', to='change_requests.changerequest')),
                        ('team', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='registry.team')),
                    ],
                    options={
                        'db_table': 'contracts_app_notification',
                        'ordering': ['created_at', 'id'],
                    },
                ),
                migrations.CreateModel(
                    name='ReviewPolicy',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('review_period', models.DurationField(help_text='How long consumer teams have to answer, e.g. 7 days.')),
                        ('dataset', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='review_policy', to='registry.dataset')),
                    ],
                    options={
                        'db_table': 'contracts_app_reviewpolicy',
                    },
                ),
                migrations.CreateModel(
                    name='TeamReview',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('status', models.CharField(choices=[('pending', 'Waiting'), ('acknowledged', 'Acknowledged'), ('objected', 'Objected')], default='pending', max_length=20)),
                        ('comment', models.TextField(blank=True)),
                        ('responded_by_label', models.CharField(blank=True, max_length=200)),
                        ('responded_at', models.DateTimeField(blank=True, null=True)),
                        ('change_request', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='reviews', to='change_requests.changerequest')),
                        ('responded_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('team', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='change_request_reviews', to='registry.team')),
                    ],
                    options={
                        'db_table': 'contracts_app_teamreview',
                        'ordering': ['team__name'],
                    },
                ),
                migrations.AddIndex(
                    model_name='changerequest',
                    index=models.Index(condition=models.Q(('state', 'open')), fields=['deadline_at'], name='change_request_open_deadline'),
                ),
                migrations.AddConstraint(
                    model_name='changerequest',
                    constraint=models.UniqueConstraint(condition=models.Q(('state__in', ['open', 'approved'])), fields=('contract',), name='change_request_one_unfinished_per_contract'),
                ),
                migrations.AddIndex(
                    model_name='notification',
                    index=models.Index(condition=models.Q(('gave_up_at__isnull', True), ('sent_at__isnull', True)), fields=['created_at'], name='notification_unsent'),
                ),
                migrations.AddConstraint(
                    model_name='notification',
                    constraint=models.UniqueConstraint(fields=('change_request', 'event', 'channel', 'recipient'), name='notification_once_per_event_and_recipient'),
                ),
                migrations.AddConstraint(
                    model_name='teamreview',
                    constraint=models.UniqueConstraint(fields=('change_request', 'team'), name='team_review_unique'),
                ),

            ],
        ),
    ]
