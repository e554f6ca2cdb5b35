"""Django checks: each prints one JSON line {"check", "ok", "detail"}. The database comes
from PGHOST, PGPORT, PGUSER, PGDATABASE; the app's tables are dropped first, so a run
starts from an empty schema."""

import datetime
import json
import os
import sys
import traceback
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import IntegrityError, connection, transaction  # noqa: E402
from django.db.models import Count, Sum  # noqa: E402

from shop.models import Author, Book, Tag  # noqa: E402

TABLES = ["shop_tag_books", "shop_tag", "shop_book", "shop_author", "django_content_type", "django_migrations"]


def eq(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def reset():
    with connection.cursor() as c:
        for t in TABLES:
            c.execute(f"drop table if exists {t}")


def migrate():
    call_command("migrate", verbosity=0, interactive=False)
    with connection.cursor() as c:
        c.execute("select app, name from django_migrations where app = 'shop' order by id")
        eq(c.fetchall(), [("shop", "0001_initial"), ("shop", "0002_book_editor_isbn"), ("shop", "0003_longer_fields"),
                          ("shop", "0004_book_attributes"), ("shop", "0005_book_edition")],
           "applied migrations")


def introspection():
    intro = connection.introspection
    with connection.cursor() as c:
        tables = {t.name for t in intro.get_table_list(c)}
        for t in ("shop_author", "shop_book", "shop_tag", "shop_tag_books"):
            assert t in tables, f"{t} not in {sorted(tables)}"
        cols = [d.name for d in intro.get_table_description(c, "shop_book")]
        eq(cols, ["id", "title", "price", "published", "author_id", "editor_id", "isbn", "attributes", "edition"],
           "columns")
        types = {d.name: intro.get_field_type(d.type_code, d) for d in intro.get_table_description(c, "shop_book")}
        eq(types["attributes"], "JSONField", "a jsonb column's field type")
        eq(types["edition"], "IntegerField", "a column whose type a migration changed")
        eq(intro.get_primary_key_column(c, "shop_book"), "id", "primary key")
        cons = intro.get_constraints(c, "shop_book")
        uniq = cons["shop_book_author_title_uniq"]
        eq((uniq["columns"], uniq["unique"]), (["author_id", "title"], True), "unique constraint")
        fks = [v for v in cons.values() if v["foreign_key"]]
        eq(sorted((v["columns"], v["foreign_key"]) for v in fks),
           [(["author_id"], ("shop_author", "id")), (["editor_id"], ("shop_author", "id"))], "foreign keys")
        indexed = sorted(v["columns"][0] for v in cons.values() if v["index"] and not v["unique"])
        eq(indexed, ["author_id", "editor_id", "price", "title", "title"], "indexes")
        eq([v["columns"] for v in cons.values() if v["unique"] and not v["primary_key"] and len(v["columns"]) == 1],
           [["isbn"]], "unique field")
        eq(cons["shop_book_price_idx"]["columns"], ["price"], "index")
        eq(intro.get_relations(c, "shop_book"),
           {"author_id": ("id", "shop_author"), "editor_id": ("id", "shop_author")}, "relations")
        eq(intro.get_sequences(c, "shop_author"), [{"name": "shop_author_id_seq", "table": "shop_author", "column": "id"}],
           "sequences")


def crud():
    a = Author.objects.create(name="Ursula", born=datetime.date(1929, 10, 21))
    b = Book.objects.create(author=a, title="The Dispossessed", price=Decimal("12.50"))
    eq(Book.objects.get(pk=b.pk).author.name, "Ursula", "read back through the foreign key")
    eq(Author.objects.get(ref=a.ref).pk, a.pk, "a UUID field")
    Book.objects.filter(pk=b.pk).update(price=Decimal("13.00"))
    eq(Book.objects.get(pk=b.pk).price, Decimal("13.00"), "update")
    t = Tag.objects.create(name="sf")
    t.books.add(b)
    eq(list(Book.objects.filter(tags__name="sf").values_list("title", flat=True)), ["The Dispossessed"], "many-to-many")
    b2 = Book.objects.create(author=a, title="Lathe", price=Decimal("9.99"))
    b2.delete()
    eq(Book.objects.filter(author=a).count(), 1, "delete")


def bulk_create():
    authors = Author.objects.bulk_create([Author(name=f"author {i}") for i in range(50)])
    assert all(x.pk is not None for x in authors), "bulk_create returns keys"
    books = Book.objects.bulk_create(
        [Book(author=authors[i % 50], title=f"book {i}", price=Decimal(i) / 4) for i in range(500)])
    eq(len(books), 500, "books created")
    agg = Book.objects.filter(title__startswith="book ").aggregate(n=Count("id"), total=Sum("price"))
    eq(agg, {"n": 500, "total": Decimal("31187.50")}, "aggregate")
    top = (Author.objects.filter(name__startswith="author ").annotate(n=Count("books"))
           .order_by("-n", "name").values_list("name", "n")[:2])
    eq(list(top), [("author 0", 10), ("author 1", 10)], "annotate")
    eq(Book.objects.select_related("author").get(title="book 7").author.name, "author 7", "select_related")


def unique_violation():
    a = Author.objects.get(name="Ursula")
    try:
        with transaction.atomic():
            Book.objects.create(author=a, title="The Dispossessed", price=Decimal("1"))
        raise AssertionError("duplicate accepted")
    except IntegrityError as e:
        eq(e.__cause__.diag.constraint_name, "shop_book_author_title_uniq", "constraint name")


def foreign_key_violation():
    # Django's foreign keys are DEFERRABLE INITIALLY DEFERRED: the violation is found at COMMIT.
    try:
        with transaction.atomic():
            Book.objects.create(author_id=987654321, title="orphan", price=Decimal("1"))
        raise AssertionError("orphan accepted")
    except IntegrityError as e:
        eq(e.__cause__.sqlstate, "23503", "sqlstate")
    eq(Book.objects.filter(title="orphan").count(), 0, "orphan rolled back")


def deferred_order():
    # A child may come before its parent inside one transaction.
    with transaction.atomic():
        Book.objects.create(author_id=424242, title="early", price=Decimal("2"))
        Author.objects.create(id=424242, name="late parent")
    eq(Book.objects.get(title="early").author.name, "late parent", "deferred check passed")


def savepoints():
    with transaction.atomic():
        Author.objects.create(name="kept")
        try:
            with transaction.atomic():
                Author.objects.create(name="undone")
                raise RuntimeError("roll back the savepoint")
        except RuntimeError:
            pass
    eq(list(Author.objects.filter(name__in=["kept", "undone"]).values_list("name", flat=True)), ["kept"], "rows")


def json_field():
    a = Author.objects.create(name="json author")
    Book.objects.bulk_create([
        Book(author=a, title="red", price=Decimal("1"), attributes={"color": "red", "size": 3, "tags": ["a", "b"]}),
        Book(author=a, title="blue", price=Decimal("2"), attributes={"color": "blue", "size": 10, "extra": None}),
        Book(author=a, title="plain", price=Decimal("3")),
    ])
    mine = Book.objects.filter(author=a)
    eq(mine.get(title="red").attributes, {"color": "red", "size": 3, "tags": ["a", "b"]}, "read back")
    eq(list(mine.filter(attributes__color="blue").values_list("title", flat=True)), ["blue"], "key lookup")
    eq(list(mine.filter(attributes__size__gt=5).values_list("title", flat=True)), ["blue"], "key comparison")
    eq(sorted(mine.filter(attributes__has_key="size").values_list("title", flat=True)), ["blue", "red"], "has_key")
    eq(list(mine.filter(attributes__contains={"tags": ["b"]}).values_list("title", flat=True)), ["red"], "contains")
    eq(list(mine.filter(attributes__tags__0="a").values_list("title", flat=True)), ["red"], "array element")
    eq(list(mine.filter(attributes__extra__isnull=False).values_list("title", flat=True)), ["blue"], "JSON null key")
    eq(list(mine.filter(attributes={}).values_list("title", flat=True)), ["plain"], "the default")
    eq(sorted(mine.values_list("attributes__color", flat=True), key=str), [None, "blue", "red"], "key transform")
    b = mine.get(title="plain")
    b.attributes = {"nested": {"k": [1, 2.5, "x"]}}
    b.save()
    eq(mine.get(attributes__nested__k__1=2.5).title, "plain", "nested update and lookup")


def cascade_delete():
    a = Author.objects.get(name="author 3")
    deleted, per_model = a.delete()
    eq(per_model.get("shop.Book"), 10, "books deleted with their author")
    eq(Book.objects.filter(author_id=a.id if a.id else -1).count(), 0, "no orphans")


def functions_and_date_lookups():
    """Database functions and the date lookups Django writes with AT TIME ZONE."""
    from django.db.models import Value
    from django.db.models.functions import Concat, ExtractMonth, Length, Round, TruncDay, Upper

    row = (Author.objects.filter(name="Ursula")
           .annotate(u=Upper("name"), c=Concat("name", Value("!")), n=Length("name"))
           .values_list("u", "c", "n").get())
    eq(row, ("URSULA", "Ursula!", 6), "Upper, Concat, Length")
    rounded = Book.objects.filter(title="The Dispossessed").annotate(r=Round("price")).values_list("r", flat=True)
    eq(list(rounded), [Decimal("13")], "Round")
    published = list(Book.objects.values_list("published", flat=True))
    day = published[0].date()
    eq(Book.objects.filter(published__date=day).count(), sum(p.date() == day for p in published), "__date")
    eq(Book.objects.filter(published__year=day.year).count(), sum(p.year == day.year for p in published),
       "__year")
    months = set(Book.objects.annotate(m=ExtractMonth("published")).values_list("m", flat=True))
    eq(months, {p.month for p in published}, "ExtractMonth")
    days = set(Book.objects.annotate(d=TruncDay("published")).values_list("d", flat=True))
    eq({d.date() for d in days}, {p.date() for p in published}, "TruncDay")


CHECKS = [migrate, introspection, crud, bulk_create, unique_violation, foreign_key_violation, deferred_order,
          savepoints, json_field, cascade_delete, functions_and_date_lookups]

if __name__ == "__main__":
    reset()
    for check in CHECKS:
        try:
            check()
            print(json.dumps({"check": check.__name__, "ok": True}), flush=True)
        except Exception as e:  # noqa: BLE001
            detail = f"{type(e).__name__}: {e}"
            print(json.dumps({"check": check.__name__, "ok": False, "detail": detail,
                              "trace": traceback.format_exc()[-2000:]}), flush=True)
