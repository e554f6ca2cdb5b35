# A migration that changes columns' types: a longer indexed CharField, a CharField
# that becomes a TextField, a unique CharField made longer.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('shop', '0002_book_editor_isbn'),
    ]

    operations = [
        migrations.AlterField(
            model_name='book',
            name='title',
            field=models.CharField(db_index=True, max_length=300),
        ),
        migrations.AlterField(
            model_name='author',
            name='name',
            field=models.CharField(max_length=150, unique=True),
        ),
        migrations.AlterField(
            model_name='book',
            name='isbn',
            field=models.TextField(null=True, unique=True),
        ),
    ]
