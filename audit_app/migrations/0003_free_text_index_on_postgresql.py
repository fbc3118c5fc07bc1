"""On PostgreSQL, the free-text filter (`q`: a case-insensitive substring of the details) uses a trigram index
when the pg_trgm extension can be had (it is a trusted extension: the database's owner may create it); without
it the filter still works, by a scan. SQLite has no such index: its logs are small."""
from django.db import migrations

TABLE = "audit_app_auditrecord"
INDEX = "audit_details_trgm"


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")
        if cursor.fetchone() is None:
            return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    # The expression Django's icontains compares: UPPER("details"::text) LIKE UPPER(%s).
    schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {INDEX} ON {TABLE} USING gin ((UPPER(details::text)) gin_trgm_ops)")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("audit_app", "0002_refuse_changes_on_postgresql")]
    operations = [migrations.RunPython(create, drop)]
