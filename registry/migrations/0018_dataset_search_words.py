"""Dataset search through the words of namespace, name and description (one GIN index).

The trigram indexes of 0014 answered a search from the posting lists of the fragment's
trigrams, and a registry's names share their trigrams ("000", "tab", "ble" are in
nearly every name of a warehouse): those lists, and the search's cost, grew with the
world (100k datasets: ten times the buffers of 10k for a fragment that matches one).

This index holds, for each dataset, every *suffix* of every word (a word: a run of
letters and digits, lower-cased; `analytics.orders_daily_2024` has the words
`analytics`, `orders`, `daily`, `2024`), each cut to 40 characters. A substring of a
word is the start of one of its suffixes, so `registry_search_query` asks for the query's
last word as a prefix (`'rders':*`) and for its other words whole (each must end a word of
the dataset, or be one); that lexeme is found in the index's sorted keys and its posting
list holds only the datasets that contain it: the cost follows the matches, not the
world. SQL functions hold both sides so the index and the query split words alike.

`registry_search_words` reads the first 2,000 characters of each field (a tsvector's
size is bounded; the index holds one entry per letter or digit of them).

SQLite (the demo) keeps its icontains scan. On a large existing table the CREATE INDEX
takes a while and blocks writes meanwhile: docs/operations.md says how to build it
CONCURRENTLY first (this migration then finds it and does nothing).
"""

from django.db import migrations

WORDS = r"""
CREATE OR REPLACE FUNCTION registry_search_words(namespace text, name text, description text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_to_tsvector(array_agg(DISTINCT substr(w, i, 40))), ''::tsvector)
    FROM unnest(ARRAY[namespace, name, description]) AS part,
         regexp_split_to_table(lower(left(coalesce(part, ''), 2000)), '[^[:alnum:]]+') AS w,
         generate_series(1, length(w)) AS i
   WHERE w <> ''
$$
"""

QUERY = r"""
CREATE OR REPLACE FUNCTION registry_search_query(q text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(quote_literal(left(w, 40)) || CASE WHEN o = last THEN ':*' ELSE '' END,
                             ' & ' ORDER BY o), '')::tsquery
    FROM (SELECT w, o, max(o) OVER () AS last
            FROM regexp_split_to_table(lower(coalesce(q, '')), '[^[:alnum:]]+') WITH ORDINALITY AS t(w, o)
           WHERE w <> '') AS words
$$
"""

# A necessary condition of a match, cheap to test on a row: each word of the query (cut
# to 40 letters) is in the row's lower-cased text. PostgreSQL tests it before the words
# (it orders a row's conditions by their cost): when the planner walks the
# (namespace, name) index for a common word and keeps the rows that match, the rows
# that do not are turned away without building their words.
PATTERNS = r"""
CREATE OR REPLACE FUNCTION registry_search_patterns(q text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg('%%' || left(w, 40) || '%%'), '{}')  -- doubled for the driver; LIKE reads two as one
    FROM regexp_split_to_table(lower(coalesce(q, '')), '[^[:alnum:]]+') AS w
   WHERE w <> ''
$$
"""

# fastupdate off: a new or renamed dataset's words go into the index at once, not into a
# pending list every search reads from end to end until a vacuum merges it (the bench's
# worlds, indexed before their rows were loaded, read thousands of pending pages per search).
INDEX = ("CREATE INDEX IF NOT EXISTS dataset_search_words ON registry_dataset "
         "USING gin (registry_search_words(namespace, name, description)) WITH (fastupdate = off)")

TRIGRAM_COLUMNS = ("namespace", "name", "description")


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(WORDS)
    schema_editor.execute(QUERY)
    schema_editor.execute(PATTERNS)
    schema_editor.execute(INDEX)
    for column in TRIGRAM_COLUMNS:
        schema_editor.execute(f"DROP INDEX IF EXISTS dataset_{column}_trgm")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for column in TRIGRAM_COLUMNS:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS dataset_{column}_trgm ON registry_dataset "
            f"USING gin (UPPER({column}::text) gin_trgm_ops)")
    schema_editor.execute("DROP INDEX IF EXISTS dataset_search_words")
    schema_editor.execute("DROP FUNCTION IF EXISTS registry_search_patterns(text)")
    schema_editor.execute("DROP FUNCTION IF EXISTS registry_search_query(text)")
    schema_editor.execute("DROP FUNCTION IF EXISTS registry_search_words(text, text, text)")


class Migration(migrations.Migration):
    dependencies = [("registry", "0017_column_read_team_indexes")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
