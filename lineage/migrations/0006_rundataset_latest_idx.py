from django.db import migrations, models


class Migration(migrations.Migration):
    """The dataset index of run edges gains the run, so the newest run that wrote
    a dataset is one index probe (Marquez's read API asks it for every dataset)."""

    dependencies = [
        ("lineage", "0005_usage_facts_without_db_constraints"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="rundataset",
            index=models.Index(fields=["dataset", "direction", "run"], name="lineage_rundataset_latest_idx"),
        ),
        migrations.RemoveIndex(
            model_name="rundataset",
            name="lineage_rundataset_dataset_idx",
        ),
    ]
