"""An index on the object id alone, for the free-text filter's `object_id = q` (docs/audit.md has the figures
before and after)."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("audit_app", "0003_free_text_index_on_postgresql")]
    operations = [
        migrations.AddIndex(model_name="auditrecord", index=models.Index(fields=["object_id"], name="audit_objectid")),
    ]
