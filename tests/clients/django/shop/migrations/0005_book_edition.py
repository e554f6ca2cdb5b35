# A migration that adds a text column and, in the same transaction, changes it to an
# integer one: AlterField's ALTER COLUMN ... TYPE integer USING "edition"::integer,
# which rewrites the rows.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('shop', '0004_book_attributes'),
    ]

    operations = [
        migrations.AddField(
            model_name='book',
            name='edition',
            field=models.CharField(max_length=10, null=True),
        ),
        migrations.AlterField(
            model_name='book',
            name='edition',
            field=models.IntegerField(null=True),
        ),
    ]
