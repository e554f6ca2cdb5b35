"""A small app: foreign keys, unique constraints, indexes and a many-to-many table."""

import uuid

from django.db import models


class Author(models.Model):
    name = models.CharField(max_length=150, unique=True)
    born = models.DateField(null=True)
    ref = models.UUIDField(default=uuid.uuid4, editable=False)


class Book(models.Model):
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="books")
    title = models.CharField(max_length=300, db_index=True)
    price = models.DecimalField(max_digits=8, decimal_places=2)
    published = models.DateTimeField(auto_now_add=True)
    # Added by a second migration, to the existing table.
    editor = models.ForeignKey(Author, null=True, on_delete=models.SET_NULL, related_name="edited")
    isbn = models.TextField(null=True, unique=True)
    # Added by a fourth migration: a jsonb column.
    attributes = models.JSONField(default=dict)
    # Added as text and changed to an integer by a fifth migration.
    edition = models.IntegerField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["author", "title"], name="shop_book_author_title_uniq")]
        indexes = [models.Index(fields=["price"], name="shop_book_price_idx")]


class Tag(models.Model):
    name = models.SlugField(unique=True)
    books = models.ManyToManyField(Book, related_name="tags")
