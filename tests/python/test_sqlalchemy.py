"""SQLAlchemy 2 against the server, as an application uses it: `create_all`, the
inspector (tables, columns, primary keys, indexes, foreign keys, unique constraints),
table reflection, and ORM sessions with bulk inserts, updates, deletes and rollbacks.
The expectations hold on PostgreSQL 15 too."""

from __future__ import annotations

from decimal import Decimal

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class Base(DeclarativeBase):
    pass


class Author(Base):
    __tablename__ = "sa_author"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(50))


class Book(Base):
    __tablename__ = "sa_book"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str | None] = mapped_column(sa.String(100))
    price: Mapped[Decimal | None] = mapped_column(sa.Numeric(8, 2))
    author_id: Mapped[int | None]


@pytest.fixture
def engine(server):
    url = sa.URL.create(
        "postgresql+psycopg",
        username=server.user,
        host=server.host,
        port=server.port,
        database=server.dbname,
    )
    eng = sa.create_engine(url)
    with eng.begin() as c:
        c.execute(sa.text("drop table if exists sa_book, sa_author"))
    Base.metadata.create_all(eng)
    yield eng
    with eng.begin() as c:
        c.execute(sa.text("drop table if exists sa_book, sa_author"))
    eng.dispose()


def test_inspector(engine):
    insp = sa.inspect(engine)
    assert insp.has_table("sa_book") and not insp.has_table("sa_nosuch")
    assert sorted(t for t in insp.get_table_names() if t.startswith("sa_")) == ["sa_author", "sa_book"]
    columns = [
        (c["name"], str(c["type"]), c["nullable"], c["default"]) for c in insp.get_columns("sa_book")
    ]
    assert columns == [
        ("id", "INTEGER", False, "nextval('sa_book_id_seq'::regclass)"),
        ("title", "VARCHAR(100)", True, None),
        ("price", "NUMERIC(8, 2)", True, None),
        ("author_id", "INTEGER", True, None),
    ]
    pk = insp.get_pk_constraint("sa_book")
    assert (pk["name"], pk["constrained_columns"]) == ("sa_book_pkey", ["id"])
    assert insp.get_indexes("sa_book") == []
    assert insp.get_foreign_keys("sa_book") == []
    assert insp.get_unique_constraints("sa_book") == []


def test_reflection(engine):
    table = sa.Table("sa_book", sa.MetaData(), autoload_with=engine)
    assert [c.name for c in table.columns] == ["id", "title", "price", "author_id"]
    assert [c.name for c in table.primary_key.columns] == ["id"]


def test_orm_session(engine):
    with Session(engine) as s:
        author = Author(name="Le Guin")
        s.add(author)
        s.flush()
        s.add_all(
            [
                Book(title="Earthsea", price=Decimal("9.50"), author_id=author.id),
                Book(title="The Dispossessed", price=Decimal("12"), author_id=author.id),
                Book(title="Lathe", price=None, author_id=author.id),
            ]
        )
        s.commit()
        books = s.scalars(sa.select(Book).order_by(Book.title)).all()
        assert [(b.title, b.price) for b in books] == [
            ("Earthsea", Decimal("9.50")),
            ("Lathe", None),
            ("The Dispossessed", Decimal("12.00")),
        ]
        books[0].price = Decimal("10.25")
        s.delete(books[1])
        s.commit()
        s.add(Book(title="never", author_id=author.id))
        s.flush()
        s.rollback()
        q = (
            sa.select(Author.name, sa.func.count(Book.id), sa.func.sum(Book.price))
            .join(Book, Book.author_id == Author.id)
            .group_by(Author.name)
        )
        assert s.execute(q).all() == [("Le Guin", 2, Decimal("22.25"))]
        assert s.scalar(
            sa.select(sa.func.count()).select_from(Book).where(
                Book.author_id.in_(sa.select(Author.id).where(Author.name.like("Le%")))
            )
        ) == 2
