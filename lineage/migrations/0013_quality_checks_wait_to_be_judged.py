from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('lineage', '0012_raw_events_partitioned_by_event_time'),
        ('registry', '0016_reader_input_schemas'),
    ]

    operations = [
        migrations.AddField(
            model_name='qualitycheck',
            name='judge_attempts',
            field=models.PositiveSmallIntegerField(default=0, help_text='Judgements of this write that failed.'),
        ),
        # The results stored before were judged as they arrived (or wait in the
        # incidents app's own table, which its next migration folds in here).
        migrations.AddField(
            model_name='qualitycheck',
            name='judged',
            field=models.BooleanField(default=True, help_text='Judged by the listeners of quality results since its last write.'),
        ),
        migrations.AlterField(
            model_name='qualitycheck',
            name='judged',
            field=models.BooleanField(default=False, help_text='Judged by the listeners of quality results since its last write.'),
        ),
        migrations.AddIndex(
            model_name='qualitycheck',
            index=models.Index(condition=models.Q(('judged', False)), fields=['dataset', 'checked_at'], name='lineage_quality_waiting_idx'),
        ),
    ]
