from django.db import migrations


def facts_of_stored_jobs(apps, schema_editor):
    """Every stored job gets its row in registry.JobTeam with what its latest job
    facets say for ownership (dbt_node, ownership); `manage.py attribute_jobs`
    then decides their teams."""
    Job, JobTeam = apps.get_model("lineage", "Job"), apps.get_model("registry", "JobTeam")
    from registry.ownership import job_facts  # a pure function of the facets

    known = {(j.job_namespace, j.job_name): j for j in JobTeam.objects.all()}
    new, changed = [], []
    for job in Job.objects.order_by("pk").iterator():
        facts = job_facts(job.facets or {})
        row = known.get((job.namespace, job.name))
        if row is None:
            row = JobTeam(job_namespace=job.namespace, job_name=job.name)
            new.append(row)
        elif facts.said:
            changed.append(row)
        row.dbt_unique_id, row.dbt_path = facts.dbt_unique_id or "", facts.dbt_path or ""
        row.owners = list(facts.owners or ())
    JobTeam.objects.bulk_create(new, batch_size=1000, ignore_conflicts=True)
    JobTeam.objects.bulk_update(changed, ["dbt_unique_id", "dbt_path", "owners"], batch_size=1000)


class Migration(migrations.Migration):

    dependencies = [
        ("lineage", "0009_constraint_messages_and_names"),
        ("registry", "0010_job_teams_and_ownership_rules"),
    ]

    operations = [migrations.RunPython(facts_of_stored_jobs, migrations.RunPython.noop)]
