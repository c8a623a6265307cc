# The ActiveRecord model of docs/application-code.md ("Ruby on Rails") on a
# live server: run by test/clients/rails.sh with the socket directory and
# port. Written for Debian 12's ActiveRecord 6.1 and ruby-pg 1.4. Prints
# "ok"/"not ok" lines; exits 1 if a check fails.
#
# SNOWFLAKE_CLIENT_FLOAT=1 reads the ids through a Float, as a client that
# converts them to a double would: the checks of exact ids must then fail
# (test/clients.sh runs it so, to show that they can).
require "active_record"
require "pg"
require "stringio"

dir, port = ARGV
FLOAT = ENV["SNOWFLAKE_CLIENT_FLOAT"] == "1"
$count = 0
$failed = 0

def report(ok, what, detail = "")
  $count += 1
  puts "#{ok ? 'ok' : 'not ok'} #{$count} - #{what}#{ok || detail.empty? ? '' : " (#{detail})"}"
  $failed = 1 unless ok
end

# What the application holds: the id as ActiveRecord gives it, or (on
# purpose) through a double.
def app_id(id)
  FLOAT ? id.to_f.to_i : id
end

puts "# ActiveRecord #{ActiveRecord.version}, pg #{PG::VERSION}, Ruby #{RUBY_VERSION}#{FLOAT ? ', ids through Float' : ''}"
ActiveRecord::Base.establish_connection(adapter: "postgresql", host: dir, port: port.to_i,
                                        username: "postgres", database: "postgres",
                                        # The test instance's search_path names pg_catalog
                                        # (test/lib/pg.sh), whose tables schema.rb would dump.
                                        schema_search_path: "public")
ActiveRecord::Migration.verbose = false
conn = ActiveRecord::Base.connection

# The migration: a bigint key whose default is the database's. With a
# default, Rails keeps the type bigint (without one, id: :bigint is bigserial).
ActiveRecord::Schema.define do
  create_table :orders, id: :bigint, default: -> { "snowflake_nextval()" } do |t|
    t.text :item
  end
end

class Order < ActiveRecord::Base
end

# Without the default, Rails' primary key is a bigserial: ids from a sequence.
ActiveRecord::Schema.define do
  create_table :plain_orders, id: :bigint
end
plain = conn.select_value("SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'plain_orders'::regclass")
report(plain.to_s.start_with?("nextval("), "without default:, id: :bigint is a bigserial (a sequence's ids)", plain.inspect)

# A string default is not SQL: Rails 6.1 leaves the key without any default,
# and an insert fails (NOT NULL).
ActiveRecord::Schema.define do
  create_table :string_default, id: :bigint, default: "snowflake_nextval()"
end
sd = conn.select_value("SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'string_default'::regclass")
class StringDefault < ActiveRecord::Base
  self.table_name = "string_default"
end
refused = begin
  StringDefault.create!
  "inserted"
rescue ActiveRecord::NotNullViolation => e
  e.class.name
end
report(sd.nil? && refused == "ActiveRecord::NotNullViolation",
       "default: \"snowflake_nextval()\" (a string) leaves no default: create! fails (NOT NULL)",
       "#{sd.inspect}, #{refused}")

# schema.rb keeps the default as the database's expression.
dump = StringIO.new
ActiveRecord::SchemaDumper.dump(conn, dump)
line = dump.string.lines.find { |l| l.include?('create_table "orders"') }.to_s
report(line.include?('default: -> { "snowflake_nextval()" }'), "schema.rb keeps default: -> { \"snowflake_nextval()\" }",
       line.strip)

kind, default = conn.select_rows(<<~SQL).first
  SELECT format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid)
  FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
  WHERE a.attrelid = 'orders'::regclass AND a.attname = 'id'
SQL
report(kind == "bigint" && default == "snowflake_nextval()",
       "create_table id: :bigint, default: -> { 'snowflake_nextval()' } makes bigint DEFAULT snowflake_nextval()",
       "#{kind} #{default}")
report(Order.columns_hash["id"].default_function == "snowflake_nextval()" && Order.new.id.nil?,
       "the model leaves the id to the database (default_function, nil before save)")

# create: INSERT ... RETURNING "id".
o = Order.create!(item: "book")
sql_text = conn.select_value("SELECT id::text FROM orders WHERE item = 'book'")
got = app_id(o.id)
report(o.id.is_a?(Integer) && got.to_s == sql_text && sql_text.to_i > 2**53,
       "create! reads the database's id back, an Integer equal to SQL's text of it (above 2^53)",
       "#{got} vs #{sql_text}")
report(Order.find(got).item == "book", "find by the id", "id #{got}") rescue
  report(false, "find by the id", "#{$!.class}: id #{got}")

# insert_all returning the ids (ActiveRecord 6: no timestamps to fill).
res = Order.insert_all([{ item: "a" }, { item: "b" }, { item: "c" }], returning: %w[id])
ids = res.rows.map { |r| app_id(r[0]) }
sql_ids = conn.select_values("SELECT id::text FROM orders WHERE item IN ('a', 'b', 'c') ORDER BY id")
report(res.rows.all? { |r| r[0].is_a?(Integer) } && ids.map(&:to_s).sort == sql_ids.sort,
       "insert_all(returning: %w[id]) returns the three ids SQL has, exact",
       "#{ids.inspect} vs #{sql_ids.inspect}")
report(ids.uniq.size == 3, "the three ids stay distinct in the application", ids.inspect)

# The decoders, the id passed as a bind ($1) and as Ruby arithmetic sees it.
id = got
w = conn.select_value("SELECT snowflake_worker_id($1)", "worker", [id])
s = conn.select_value("SELECT snowflake_sequence($1)", "sequence", [id])
report(w == 7 && w == (id >> 12) & 1023 && s == id & 4095,
       "snowflake_worker_id, snowflake_sequence through select_value agree with the id's bits",
       "worker #{w.inspect}, sequence #{s.inspect}, id #{id}")
d = conn.select_one("SELECT ts, worker_id, sequence FROM snowflake_decode($1)", "decode", [id])
ts = conn.select_value("SELECT snowflake_timestamp($1)", "timestamp", [id])
report(d["worker_id"] == w && d["sequence"] == s && d["ts"] == ts && ts.is_a?(Time) &&
       (Time.now - ts).abs < 60,
       "snowflake_decode and snowflake_timestamp: the same fields, a Time within a minute of now",
       "#{d.inspect}, #{ts.inspect}")
ms_sql = conn.select_value(
  "SELECT (extract(epoch FROM snowflake_timestamp($1) - current_setting('snowflake.epoch')::timestamptz) * 1000)::bigint",
  "ms", [id])
report(ms_sql == id >> 22, "the timestamp is the epoch plus the id's milliseconds (id >> 22)",
       "#{ms_sql} vs #{id >> 22}")

# The base32 text form, both ways, through the driver.
enc = conn.select_value("SELECT snowflake_encode($1, 'base32')", "encode", [id])
back = conn.select_value("SELECT snowflake_decode_text($1, 'base32')", "decode_text", [enc])
report(enc.is_a?(String) && enc.size == 13 && back.is_a?(Integer) && back.to_s == sql_text,
       "snowflake_encode(id, 'base32') and snowflake_decode_text give the id back",
       "#{enc.inspect} -> #{back.inspect}, SQL #{sql_text}")
found = Order.where("id = snowflake_decode_text(?, 'base32')", enc.downcase).pluck(:id)
report(found.map(&:to_s) == [sql_text], "a row found by its base32 text (lower case)", found.inspect)

# as_json writes the id as a JSON number (exact digits, which JavaScript's
# JSON.parse rounds): as a string it needs saying.
js = Order.find(o.id).to_json(only: [:id])
report(js == %({"id":#{sql_text}}), "to_json writes the id as a number, all its digits", js)

exit $failed
