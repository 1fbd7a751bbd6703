import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('lineage', '0007_facets_and_static_events'),
        ('registry', '0007_token_scopes'),
    ]

    operations = [
        migrations.AddField(
            model_name='run',
            name='token',
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, help_text='The token that sent the latest event.', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='registry.apitoken'),
        ),
        migrations.AddField(
            model_name='run',
            name='token_team',
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, help_text='The team that event is attributed to.', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='registry.team'),
        ),
        migrations.AddField(
            model_name='runevent',
            name='token',
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='registry.apitoken'),
        ),
        migrations.AddField(
            model_name='runevent',
            name='token_team',
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='registry.team'),
        ),
    ]
