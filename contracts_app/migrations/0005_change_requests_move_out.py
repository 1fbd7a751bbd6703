"""Change requests now live in the change_requests app (its 0001 takes the models
over; the tables are kept, so this forgets them without touching the database).
ContractVersion.json_schema was never filled (the checker derives what it needs);
the checksum's help text says what it hashes."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('contracts_app', '0004_schema_drift'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name='Notification'),
                migrations.DeleteModel(name='TeamReview'),
                migrations.DeleteModel(name='ChangeRequest'),
                migrations.DeleteModel(name='ReviewPolicy'),
            ],
        ),
        migrations.RemoveField(model_name='contractversion', name='json_schema'),
        migrations.AlterField(
            model_name='contractversion',
            name='checksum',
            field=models.CharField(help_text="SHA-256 of the document's canonical JSON (keys sorted; see document_checksum).", max_length=64),
        ),
    ]
