from django.db import migrations, models

SCOPES_BEFORE_LINEAGE = "read write contracts:publish"


def scopes_from_lineage_flag(apps, schema_editor):
    # Existing tokens keep what they could do: every API call, and lineage
    # when they could post it (now for their own team's and unowned datasets).
    ApiToken = apps.get_model("registry", "ApiToken")
    ApiToken.objects.filter(can_write_lineage=False).update(scopes=SCOPES_BEFORE_LINEAGE)


def lineage_flag_from_scopes(apps, schema_editor):
    ApiToken = apps.get_model("registry", "ApiToken")
    ApiToken.objects.exclude(scopes__contains="lineage:write").update(can_write_lineage=False)


class Migration(migrations.Migration):

    dependencies = [
        ('registry', '0006_usage_facts_without_db_constraints'),
    ]

    operations = [
        migrations.AddField(
            model_name='apitoken',
            name='scopes',
            field=models.CharField(default='read write contracts:publish lineage:write', help_text='What the token may do, space-separated: read, write, contracts:publish, lineage:write, lineage:write:any.', max_length=200),
        ),
        migrations.RunPython(scopes_from_lineage_flag, lineage_flag_from_scopes),
        migrations.RemoveField(
            model_name='apitoken',
            name='can_write_lineage',
        ),
    ]
