from django.db import migrations


class Migration(migrations.Migration):
    """The table and index taken over from projects_app get tui_app's names."""

    dependencies = [
        ("tui_app", "0001_initial"),
    ]

    operations = [
        migrations.RenameIndex(
            model_name="tuicontrolrequest",
            new_name="tui_app_tui_owner_i_4edead_idx",
            old_name="projects_ap_owner_i_3e8e5e_idx",
        ),
        migrations.AlterModelTable(
            name="tuicontrolrequest",
            table=None,
        ),
    ]
