"""On PostgreSQL, the free-text filter finds whole words through a GIN index of each record's words
(audit_app/selectors.py, RECORD_WORDS_SQL: this migration spells the same expression, as it stood when it was
written). It replaces the trigram index of 0003 and the object id's index of 0004, which served the substring
search.

An index of an expression: no row is rewritten (the trigger of 0002, which refuses every UPDATE of a record,
is never asked), and it is built CONCURRENTLY, so a server may go on appending records while a big log is
indexed (docs/audit.md: 20 minutes for 10 million records on a busy machine). So the migration is not
atomic; one that stopped half-way leaves an invalid index, which the next run drops and builds again. SQLite
searches substrings without an index: its logs are small."""
from django.db import migrations

TABLE = "audit_app_auditrecord"
INDEX = "audit_words"
WORDS = (
    "to_tsvector('simple'::regconfig, translate(\"action\" || ' ' || \"object_type\" || ' ' || \"object_id\" || ' ' "
    "|| \"actor_name\" || ' ' || replace(replace(replace(\"details\", '\\n', ' '), '\\r', ' '), '\\t', ' '), "
    "'-./:@_\\~+<>&', '            '))")


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT index.indisvalid FROM pg_index AS index JOIN pg_class AS class ON class.oid = "
                       "index.indexrelid WHERE class.relname = %s", [INDEX])
        found = cursor.fetchone()
        if found is not None and found[0]:
            return  # built already (by hand, or a migration run that was stopped before its last step)
        if found is not None:
            cursor.execute(f"DROP INDEX CONCURRENTLY {INDEX}")
        cursor.execute(f"CREATE INDEX CONCURRENTLY {INDEX} ON {TABLE} USING gin ({WORDS})")
        cursor.execute("DROP INDEX CONCURRENTLY IF EXISTS audit_details_trgm")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        if cursor.fetchone() is not None:
            cursor.execute(f"CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_details_trgm ON {TABLE} "
                           "USING gin ((UPPER(details::text)) gin_trgm_ops)")
        cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("audit_app", "0004_object_id_index")]
    operations = [
        migrations.RunPython(create, drop),
        migrations.RemoveIndex(model_name="auditrecord", name="audit_objectid"),
    ]
