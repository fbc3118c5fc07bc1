"""Who ended each call: its worker, or the sweep that took that worker for dead (usage_app.models.ENDED_BY).
Every record made so far was ended by its worker, or is still in flight: the column's default. On PostgreSQL
a column with a constant default is added without rewriting the table."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("usage_app", "0004_calls_in_flight_index")]
    operations = [
        migrations.AddField(
            model_name="usagerecord",
            name="ended_by",
            field=models.CharField(choices=[("worker", "worker"), ("sweep", "sweep"),
                                            ("worker_after_sweep", "worker_after_sweep")],
                                   db_default="worker", default="worker", max_length=24),
        ),
    ]
