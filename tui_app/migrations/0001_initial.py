import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import agentserver.clock


class Migration(migrations.Migration):
    """TuiControlRequest moves here from projects_app with its table (projects_app 0003 lets it go); 0002
    gives the table and its index this app's names."""

    initial = True

    dependencies = [
        ("projects_app", "0003_tui_control_request_to_tui_app"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="TuiControlRequest",
                    fields=[
                        ("id", models.CharField(max_length=40, primary_key=True, serialize=False)),
                        ("path", models.CharField(max_length=255)),
                        ("body", models.JSONField(blank=True, null=True)),
                        ("state", models.CharField(default="pending", max_length=16)),
                        ("response", models.JSONField(blank=True, null=True)),
                        ("time_created", models.BigIntegerField(default=agentserver.clock.now_ms)),
                        ("owner", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                                    related_name="tui_requests", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "db_table": "projects_app_tuicontrolrequest",
                        "indexes": [models.Index(fields=["owner", "state", "id"],
                                                 name="projects_ap_owner_i_3e8e5e_idx")],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
