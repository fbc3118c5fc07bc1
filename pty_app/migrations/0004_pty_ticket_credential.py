from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('pty_app', '0003_json_columns_keep_nul'),
    ]

    operations = [
        migrations.AddField(
            model_name='ptyticket',
            name='credential',
            field=models.CharField(default='', max_length=120),
        ),
    ]
