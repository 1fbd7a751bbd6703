# The status view's default order (longest in its status first) seeks through an index.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('freshness', '0006_status_and_last_write_index'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='datasetfreshness',
            index=models.Index(condition=models.Q(('status__in', ['stale', 'warning'])), fields=['status_since'], name='freshness_attention_since_idx'),
        ),
    ]
