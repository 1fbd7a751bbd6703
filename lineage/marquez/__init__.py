"""Marquez's read API over the registry's lineage, so Marquez's tools read it.

The shapes are those of Marquez's own OpenAPI document: namespaces, datasets
and their versions, jobs and their runs, run facets, the lineage graph with
Marquez's full node payload, search and the raw events. What the registry does
not keep is derived, stably and honestly (docs/lineage.md, "Marquez's read API"):

- a namespace is an OpenLineage namespace some dataset or job is in;
- a dataset version is a run that wrote the dataset, named by that run's id;
- a job has one version, a uuid5 of its namespace and name;
- times not kept are first/last seen times (a dataset's createdAt is when it
  was first seen, its updatedAt the newest of that and its latest write).

`shapes` turns rows into Marquez's objects, `reads` loads them with a fixed
number of queries, `graph` is the one-statement neighbourhood walk with the
full node payload, `paths` splits the namespace paths, `views` and `urls` serve
them under /api/v1/.
"""
