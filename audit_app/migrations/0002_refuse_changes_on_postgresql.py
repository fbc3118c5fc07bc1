"""On PostgreSQL, a trigger refuses UPDATE and DELETE of audit records, whoever asks; retention's DELETE
alone goes through, with the transaction-local setting agentserver.audit_retention on (audit_app/retention.py).
SQLite has no roles to keep apart: its file is the server's own. TRUNCATE is left alone (Django's test flush
uses it); an operator who wants it refused too revokes TRUNCATE from the application's role (docs/audit.md)."""
from django.db import migrations

TABLE = "audit_app_auditrecord"
CREATE = f"""
CREATE OR REPLACE FUNCTION audit_app_refuse_change() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('agentserver.audit_retention', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION USING MESSAGE = 'audit records cannot be changed or removed (' || TG_OP || ' refused)',
        ERRCODE = 'insufficient_privilege';
END
$$ LANGUAGE plpgsql;
CREATE TRIGGER audit_app_append_only BEFORE UPDATE OR DELETE ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION audit_app_refuse_change();
"""
DROP = f"""
DROP TRIGGER IF EXISTS audit_app_append_only ON {TABLE};
DROP FUNCTION IF EXISTS audit_app_refuse_change();
"""


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("audit_app", "0001_audit_log")]
    operations = [migrations.RunPython(create, drop)]
