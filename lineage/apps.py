from django.apps import AppConfig


class LineageConfig(AppConfig):
    name = "lineage"
    verbose_name = "Lineage"

    def ready(self) -> None:
        from lineage import demo, inbox, views  # noqa: F401  (register the demo step, the dataset-page section, the inbox)
        from lineage.column_graph import absorbing_jobs, fed_steps, passing_jobs
        from lineage.models import compiled_queries, observed_schemas
        from registry.hooks import (
            column_absorbers,
            column_passers,
            column_steps,
            dataset_observed_schemas,
            hot_path,
            job_queries,
            nav_item,
        )

        nav_item("Jobs", "lineage-job-list", order=30)
        # Pipelines POST events at a high rate with bearer tokens: skip the page middleware.
        hot_path("api-lineage")
        hot_path("api-lineage-batch")
        hot_path("api-lineage-slash")  # the same endpoint as Marquez's Java client spells it
        # Who a change breaks downstream: the columns a column's values reach, from the
        # field edges, and the jobs whose SQL absorbs the change.
        column_steps(fed_steps)
        column_absorbers(absorbing_jobs)
        column_passers(passing_jobs)
        # What a dataset's latest schema facet listed, for drafting a contract from it.
        dataset_observed_schemas(observed_schemas)
        # Consumers' compiled SQL and the schemas they read, to type-check and verify a change.
        job_queries(compiled_queries)
