# The catalogue pages a domain by name: the (domain) index becomes (domain, name).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('contracts_app', '0009_latest_per_dataset_indexed'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='contract',
            name='contract_domain_idx',
        ),
        migrations.AddIndex(
            model_name='contract',
            index=models.Index(fields=['domain', 'name'], name='contract_domain_name_idx'),
        ),
    ]
