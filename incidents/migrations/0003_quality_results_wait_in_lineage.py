"""The results waiting to be judged wait in lineage's QualityCheck rows, which
the ingest writes anyway: one table less written per quality event."""

from django.db import migrations


def wait_in_lineage(apps, schema_editor):
    # The results still waiting here when the migration runs stay waiting there.
    PendingResult = apps.get_model("incidents", "PendingResult")
    QualityCheck = apps.get_model("lineage", "QualityCheck")
    for dataset_id, run_uuid, event_time in PendingResult.objects.values_list("dataset_id", "run_uuid", "event_time").iterator():
        checks = QualityCheck.objects.filter(dataset_id=dataset_id)
        checks = checks.filter(run_uuid=run_uuid) if run_uuid else checks.filter(run_uuid__isnull=True, event_time=event_time)
        checks.update(judged=False)


class Migration(migrations.Migration):

    dependencies = [
        ('incidents', '0002_pending_quality_results'),
        ('lineage', '0013_quality_checks_wait_to_be_judged'),
    ]

    operations = [
        migrations.RunPython(wait_in_lineage, migrations.RunPython.noop),
        migrations.DeleteModel(
            name='PendingResult',
        ),
    ]
