# The status view's default order (longest in its status first) seeks through an index.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('freshness', '0007_status_write_index_breaks_ties_by_dataset'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='datasetfreshness',
            index=models.Index(condition=models.Q(('status__in', ['stale', 'warning'])), fields=['status_since', 'dataset'], name='freshness_attention_since_idx'),
        ),
    ]
