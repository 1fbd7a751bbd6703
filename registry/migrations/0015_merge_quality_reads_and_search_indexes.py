from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("registry", "0014_column_reads_from_quality_checks"),
        ("registry", "0014_dataset_search_trigram_indexes"),
    ]

    operations = []
