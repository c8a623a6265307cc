# The SQLAlchemy mapping of docs/application-code.md on a live server: run by
# test/clients/sqlalchemy.sh with the socket directory and port. Written for
# Debian 12's SQLAlchemy 1.4 (Column, declarative_base); the 2.0 form of the
# doc (mapped_column) declares the same column. Prints "ok"/"not ok" lines;
# exits 1 if a check fails.
import sys

import sqlalchemy
from sqlalchemy import BigInteger, Column, Text, create_engine, text
from sqlalchemy.orm import Session, declarative_base

Base = declarative_base()


class Order(Base):
    __tablename__ = "orders"
    id = Column(BigInteger, primary_key=True, server_default=text("snowflake_nextval()"))
    item = Column(Text)


failed = 0
count = 0


def report(ok, what, detail=""):
    global failed, count
    count += 1
    print(f"{'ok' if ok else 'not ok'} {count} - {what}{'' if ok or not detail else f' ({detail})'}")
    if not ok:
        failed = 1


print(f"# SQLAlchemy {sqlalchemy.__version__}")
engine = create_engine(f"postgresql+psycopg2://postgres@/postgres?host={sys.argv[1]}&port={sys.argv[2]}")
Base.metadata.create_all(engine)
with engine.connect() as c:
    default = c.execute(text("SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef "
                             "WHERE adrelid = 'orders'::regclass")).scalar()
    kind = c.execute(text("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                          "WHERE attrelid = 'orders'::regclass AND attname = 'id'")).scalar()
report(default == "snowflake_nextval()" and kind == "bigint",
       "the column is bigint DEFAULT snowflake_nextval() (no BIGSERIAL)", f"{kind} {default}")
with Session(engine) as session:
    order = Order(item="book")
    session.add(order)
    session.flush()
    got = order.id
    row = session.execute(text("SELECT id, snowflake_worker_id(id) FROM orders")).one()
    session.commit()
report(isinstance(got, int) and got == row[0] and row[1] == 7,
       "after flush() the object holds the database's id, exact", f"{got} vs {tuple(row)}")
sys.exit(failed)
