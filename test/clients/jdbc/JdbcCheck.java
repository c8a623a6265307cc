// JDBC (PostgreSQL's driver, Debian's libpostgresql-jdbc-java) as
// docs/application-code.md ("Java: JDBC") describes it, on a live server: run
// by test/clients/jdbc.sh with a loopback port, compiled with javac against
// /usr/share/java/postgresql.jar. Prints "ok"/"not ok" lines; exits 1 if a
// check fails.
//
// SNOWFLAKE_CLIENT_FLOAT=1 passes the ids through a double, as a client that
// converts them would: the checks of exact ids must then fail
// (test/clients.sh runs it so, to show that they can).
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;

public class JdbcCheck {
    static int count = 0;
    static boolean failed = false;
    static final boolean AS_DOUBLE = "1".equals(System.getenv("SNOWFLAKE_CLIENT_FLOAT"));

    static void report(boolean ok, String what, String detail) {
        count++;
        if (ok) {
            System.out.println("ok " + count + " - " + what);
        } else {
            failed = true;
            System.out.println("not ok " + count + " - " + what + " (" + detail + ")");
        }
    }

    // The id as the application holds it; on purpose through a double.
    static long appId(long id) {
        return AS_DOUBLE ? (long) (double) id : id;
    }

    static String text(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    static List<String> texts(Connection c, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) out.add(rs.getString(1));
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/postgres?user=postgres";
        try (Connection c = DriverManager.getConnection(url)) {
            System.out.println("# PostgreSQL JDBC " + c.getMetaData().getDriverVersion() + ", Java "
                    + System.getProperty("java.version") + (AS_DOUBLE ? ", ids through double" : ""));
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text)");
            }

            // One row, the id from getGeneratedKeys (the driver adds RETURNING).
            long id;
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO orders (item) VALUES (?)",
                    Statement.RETURN_GENERATED_KEYS)) {
                ps.setString(1, "book");
                ps.executeUpdate();
                try (ResultSet keys = ps.getGeneratedKeys()) {
                    keys.next();
                    id = appId(keys.getLong("id"));
                    report(keys.getMetaData().getColumnCount() == 2,
                            "RETURN_GENERATED_KEYS returns every column (the driver adds RETURNING *)",
                            keys.getMetaData().getColumnCount() + " columns");
                    Object o = keys.getObject("id");
                    report(o instanceof Long, "getObject gives the bigint as a java.lang.Long", String.valueOf(o.getClass()));
                }
            }
            String sqlText = text(c, "SELECT id::text FROM orders WHERE item = 'book'");
            report(Long.toString(id).equals(sqlText) && id > (1L << 53),
                    "getGeneratedKeys().getLong(\"id\") equals SQL's text of the id (above 2^53)", id + " vs " + sqlText);

            // A batch of five, keys named: consecutive ids, which a double merges.
            List<String> got = new ArrayList<>();
            HashSet<Long> distinct = new HashSet<>();
            List<Double> asDoubles = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO orders (item) VALUES (?)", new String[] {"id"})) {
                for (int i = 1; i <= 5; i++) {
                    ps.setString(1, "row " + i);
                    ps.addBatch();
                }
                ps.executeBatch();
                try (ResultSet keys = ps.getGeneratedKeys()) {
                    report(keys.getMetaData().getColumnCount() == 1, "keys named {\"id\"}: the id column only",
                            keys.getMetaData().getColumnCount() + " columns");
                    while (keys.next()) {
                        long v = appId(keys.getLong(1));
                        got.add(Long.toString(v));
                        distinct.add(v);
                        asDoubles.add(keys.getDouble(1));
                    }
                }
            }
            List<String> want = texts(c, "SELECT id::text FROM orders WHERE item LIKE 'row %' ORDER BY id");
            got.sort(null);
            report(got.equals(want) && distinct.size() == 5,
                    "executeBatch with keys named {\"id\"}: the five ids SQL has, exact and distinct", got + " vs " + want);
            // Through a double an id stays itself only if it is a multiple of
            // 32 (its sequence is, as the worker bits start at bit 12).
            int changed = 0, wrong = 0;
            for (int i = 0; i < want.size() && i < asDoubles.size(); i++) {
                long exact = Long.parseLong(want.get(i));
                boolean same = (long) (double) asDoubles.get(i) == exact;
                if (!same) changed++;
                if (same != (exact % 32 == 0)) wrong++;
            }
            report(wrong == 0 && asDoubles.size() == 5,
                    "getDouble on the same keys changes every id whose sequence is not a multiple of 32 (the trap)",
                    changed + " of 5 changed, " + wrong + " unexpected");

            // The id as a parameter (setLong): the row, the decoders.
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT o.item, snowflake_worker_id(o.id), snowflake_sequence(o.id), d.ts, d.worker_id, d.sequence, "
                    + "snowflake_timestamp(o.id), current_setting('snowflake.epoch')::timestamptz "
                    + "FROM orders o, snowflake_decode(o.id) d WHERE o.id = ?")) {
                ps.setLong(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    boolean found = rs.next();
                    report(found && "book".equals(rs.getString(1)), "the row found by setLong(id)", "id " + id);
                    if (found) {
                        int worker = rs.getInt(2), seq = rs.getInt(3);
                        report(worker == 7 && worker == ((id >> 12) & 1023) && seq == (id & 4095),
                                "snowflake_worker_id, snowflake_sequence agree with the id's bits",
                                "worker " + worker + ", sequence " + seq);
                        OffsetDateTime ts = rs.getObject(4, OffsetDateTime.class);
                        OffsetDateTime ts2 = rs.getObject(7, OffsetDateTime.class);
                        OffsetDateTime epoch = rs.getObject(8, OffsetDateTime.class);
                        long ms = Duration.between(epoch, ts).toMillis();
                        report(rs.getInt(5) == worker && rs.getInt(6) == seq && ts.isEqual(ts2) && ms == (id >> 22)
                                && Math.abs(Duration.between(ts, OffsetDateTime.now()).getSeconds()) < 60,
                                "snowflake_decode and snowflake_timestamp: the same fields, the epoch plus id >> 22 ms, within a minute of now",
                                ts + " " + ts2 + " epoch " + epoch + " ms " + ms);
                    }
                }
            }

            // The base32 text form, both ways.
            String enc;
            long back;
            try (PreparedStatement ps = c.prepareStatement("SELECT snowflake_encode(?, 'base32')")) {
                ps.setLong(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    enc = rs.getString(1);
                }
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT snowflake_decode_text(?, 'base32')")) {
                ps.setString(1, enc);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    back = rs.getLong(1);
                }
            }
            report(enc.length() == 13 && Long.toString(back).equals(sqlText),
                    "snowflake_encode(id, 'base32') and snowflake_decode_text give the id back",
                    enc + " -> " + back + ", SQL " + sqlText);
        }
        System.exit(failed ? 1 : 0);
    }
}
