"""The index of the calls in flight (partial: only records whose outcome is in_flight), which every worker's
sweep for the calls of dead workers reads every few seconds (usage_app.services.do_end_dead_calls): a lookup of a
few entries, however many records the table holds.

On PostgreSQL it is built CONCURRENTLY, so a server goes on counting calls while a big table is read (the
build reads every record once); the migration is not atomic, and one stopped half-way leaves an invalid
index, which the next run drops and builds again. SQLite builds it as any index."""
from django.db import migrations, models
from django.db.models import Q

TABLE = "usage_app_usagerecord"
INDEX = "usage_in_flight"


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        model = apps.get_model("usage_app", "UsageRecord")
        schema_editor.add_index(model, models.Index(fields=["worker"], condition=Q(outcome="in_flight"), name=INDEX))
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT index.indisvalid FROM pg_index AS index JOIN pg_class AS class ON class.oid = "
                       "index.indexrelid WHERE class.relname = %s", [INDEX])
        found = cursor.fetchone()
        if found is not None and found[0]:
            return
        if found is not None:
            cursor.execute(f"DROP INDEX CONCURRENTLY {INDEX}")
        cursor.execute(f"CREATE INDEX CONCURRENTLY {INDEX} ON {TABLE} (worker) WHERE outcome = 'in_flight'")


def drop(apps, schema_editor):
    concurrently = " CONCURRENTLY" if schema_editor.connection.vendor == "postgresql" else ""
    schema_editor.execute(f"DROP INDEX{concurrently} IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("usage_app", "0003_day_totals_and_calls_in_flight")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(create, drop)],
            state_operations=[migrations.AddIndex(
                model_name="usagerecord",
                index=models.Index(condition=Q(outcome="in_flight"), fields=["worker"], name=INDEX))]),
    ]
