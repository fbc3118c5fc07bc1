from django.db import migrations


class Migration(migrations.Migration):
    """TuiControlRequest belongs to tui_app now (tui_app 0001 takes over its table): state only, no SQL."""

    dependencies = [
        ("projects_app", "0002_tui_control_request"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="TuiControlRequest")],
            database_operations=[],
        ),
    ]
