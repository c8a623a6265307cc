# The Django 3.2 primary-key field of docs/application-code.md, on a live
# server: run by test/clients/django.sh with the socket directory and port.
# Prints "ok"/"not ok" lines; exits 1 if a check fails.
import os
import sys

import django
from django.conf import settings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
settings.configure(
    INSTALLED_APPS=["app"],
    DATABASES={"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "postgres",
                           "USER": "postgres", "HOST": sys.argv[1], "PORT": sys.argv[2]}},
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
)
django.setup()

from django.db import connection  # noqa: E402
from app.models import Line, Order  # noqa: E402

failed = 0
count = 0


def report(ok, what, detail=""):
    global failed, count
    count += 1
    print(f"{'ok' if ok else 'not ok'} {count} - {what}{'' if ok or not detail else f' ({detail})'}")
    if not ok:
        failed = 1


print(f"# Django {django.get_version()}")
with connection.schema_editor() as editor:
    editor.create_model(Order)
    editor.create_model(Line)
    # What the migration's RunSQL does.
    editor.execute("ALTER TABLE app_order ALTER COLUMN id SET DEFAULT snowflake_nextval()")


def one(sql):
    with connection.cursor() as c:
        c.execute(sql)
        return c.fetchone()


report(one("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
           "WHERE attrelid = 'app_order'::regclass AND attname = 'id'")[0] == "bigint",
       "the primary key is a plain bigint (no bigserial, no identity)")
report(one("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
           "WHERE attrelid = 'app_line'::regclass AND attname = 'order_id'")[0] == "bigint",
       "foreign keys to it are bigint")
o = Order.objects.create(item="x")
row = one("SELECT id, snowflake_worker_id(id) FROM app_order WHERE item = 'x'")
report(isinstance(o.pk, int) and o.pk == row[0] and row[1] == 7,
       "create() reads the database's id back (RETURNING), exact", f"{o.pk} vs {row}")
Line.objects.create(order=o)
report(Order.objects.get(pk=o.pk).item == "x" and Line.objects.get().order_id == o.pk,
       "lookups and foreign keys by the id")
objs = Order.objects.bulk_create([Order(item="a"), Order(item="b")])
report(all(isinstance(x.pk, int) and x.pk > o.pk for x in objs), "bulk_create() sets the ids too",
       str([x.pk for x in objs]))
sys.exit(failed)
