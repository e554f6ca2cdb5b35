# A migration that adds a JSONField (a jsonb column) with a default to the existing table.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('shop', '0003_longer_fields'),
    ]

    operations = [
        migrations.AddField(
            model_name='book',
            name='attributes',
            field=models.JSONField(default=dict),
        ),
    ]
