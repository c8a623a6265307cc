// The Go pgx (v4) use of docs/application-code.md ("Go: pgx") on a live
// server: run by test/clients/pgx.sh with the socket directory and port,
// built offline against Debian's golang-github-jackc-pgx-v4-dev (GOPATH mode,
// /usr/share/gocode). Prints "ok"/"not ok" lines; exits 1 if a check fails.
//
// SNOWFLAKE_CLIENT_FLOAT=1 passes the ids through a float64, as a client that
// converts them to a double would: the checks of exact ids must then fail
// (test/clients.sh runs it so, to show that they can).
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v4"
	_ "github.com/jackc/pgx/v4/stdlib"
)

var (
	count   int
	failed  bool
	asFloat = os.Getenv("SNOWFLAKE_CLIENT_FLOAT") == "1"
)

func report(ok bool, what string, detail string) {
	count++
	if ok {
		fmt.Printf("ok %d - %s\n", count, what)
		return
	}
	failed = true
	fmt.Printf("not ok %d - %s (%s)\n", count, what, detail)
}

// appID: the id as the application holds it; on purpose through a double.
func appID(id int64) int64 {
	if asFloat {
		return int64(float64(id))
	}
	return id
}

func must(err error) {
	if err != nil {
		fmt.Printf("not ok %d - unexpected error: %v\n", count+1, err)
		os.Exit(1)
	}
}

func main() {
	ctx := context.Background()
	dsn := fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres", os.Args[1], os.Args[2])
	conn, err := pgx.Connect(ctx, dsn)
	must(err)
	defer conn.Close(ctx)
	var version string
	must(conn.QueryRow(ctx, "SHOW server_version").Scan(&version))
	fmt.Printf("# pgx v4 (Debian's golang-github-jackc-pgx-v4-dev), PostgreSQL %s%s\n", version,
		map[bool]string{true: ", ids through float64", false: ""}[asFloat])

	_, err = conn.Exec(ctx, "CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text)")
	must(err)

	// One row: INSERT ... RETURNING id into an int64.
	var raw int64
	must(conn.QueryRow(ctx, "INSERT INTO orders (item) VALUES ($1) RETURNING id", "book").Scan(&raw))
	id := appID(raw)
	var sqlText, sqlText2 string
	must(conn.QueryRow(ctx, "SELECT id::text FROM orders WHERE item = 'book'").Scan(&sqlText))
	report(strconv.FormatInt(id, 10) == sqlText && id > 1<<53,
		"INSERT ... RETURNING id scans into an int64 equal to SQL's text of it (above 2^53)",
		fmt.Sprintf("%d vs %s", id, sqlText))

	// Several rows in one statement: consecutive ids, most of them not
	// multiples of 32, so a double would merge them.
	rows, err := conn.Query(ctx,
		"INSERT INTO orders (item) SELECT 'row ' || g FROM generate_series(1, 5) g RETURNING id")
	must(err)
	var got []string
	seen := map[int64]bool{}
	for rows.Next() {
		var v int64
		must(rows.Scan(&v))
		got = append(got, strconv.FormatInt(appID(v), 10))
		seen[appID(v)] = true
	}
	must(rows.Err())
	rows, err = conn.Query(ctx, "SELECT id::text FROM orders WHERE item LIKE 'row %'")
	must(err)
	var want []string
	for rows.Next() {
		var s string
		must(rows.Scan(&s))
		want = append(want, s)
	}
	must(rows.Err())
	sort.Strings(got)
	sort.Strings(want)
	report(strings.Join(got, ",") == strings.Join(want, ",") && len(seen) == 5,
		"a five-row INSERT ... RETURNING id: the five ids SQL has, exact and distinct",
		fmt.Sprintf("%v vs %v", got, want))

	// pgx refuses to scan a bigint into a float64 that cannot hold it (an id
	// that is not a multiple of 32): an error, not another id.
	var exact int64
	var f64 float64
	must(conn.QueryRow(ctx, "SELECT id FROM orders WHERE item LIKE 'row %' AND id % 32 <> 0 ORDER BY id LIMIT 1").Scan(&exact))
	err = conn.QueryRow(ctx, "SELECT id FROM orders WHERE id = $1", exact).Scan(&f64)
	report(err != nil && strings.Contains(err.Error(), "float64"),
		"Scan of an id into a float64 is refused with an error (pgtype), not rounded",
		fmt.Sprintf("%v: %.0f vs %d", err, f64, exact))

	// database/sql over pgx's driver (pgx/v4/stdlib): the same int64.
	db, err := sql.Open("pgx", dsn)
	must(err)
	defer db.Close()
	var viaSQL int64
	must(db.QueryRow("INSERT INTO orders (item) VALUES ($1) RETURNING id", "database/sql").Scan(&viaSQL))
	must(conn.QueryRow(ctx, "SELECT id::text FROM orders WHERE item = 'database/sql'").Scan(&sqlText2))
	report(strconv.FormatInt(appID(viaSQL), 10) == sqlText2,
		"database/sql with pgx's stdlib driver: RETURNING id into an int64, exact",
		fmt.Sprintf("%d vs %s", appID(viaSQL), sqlText2))

	// The id as a parameter: a row found by it, and the decoders.
	var item string
	err = conn.QueryRow(ctx, "SELECT item FROM orders WHERE id = $1", id).Scan(&item)
	report(err == nil && item == "book", "the row found by the int64 as a parameter", fmt.Sprint(err))
	var worker, seq int32
	must(conn.QueryRow(ctx, "SELECT snowflake_worker_id($1), snowflake_sequence($1)", id).Scan(&worker, &seq))
	report(worker == 7 && int64(worker) == (id>>12)&1023 && int64(seq) == id&4095,
		"snowflake_worker_id, snowflake_sequence agree with the id's bits",
		fmt.Sprintf("worker %d, sequence %d, id %d", worker, seq, id))
	var ts, ts2, epoch time.Time
	var dw, ds int32
	must(conn.QueryRow(ctx, "SELECT ts, worker_id, sequence FROM snowflake_decode($1)", id).Scan(&ts, &dw, &ds))
	must(conn.QueryRow(ctx, "SELECT snowflake_timestamp($1), current_setting('snowflake.epoch')::timestamptz",
		id).Scan(&ts2, &epoch))
	report(dw == worker && ds == seq && ts.Equal(ts2) && time.Since(ts).Abs() < time.Minute &&
		ts.Sub(epoch).Milliseconds() == id>>22,
		"snowflake_decode and snowflake_timestamp: the same fields, the epoch plus id >> 22 ms, within a minute of now",
		fmt.Sprintf("%v %d %d, %v, epoch %v", ts, dw, ds, ts2, epoch))

	// The base32 text form, both ways.
	var enc string
	must(conn.QueryRow(ctx, "SELECT snowflake_encode($1, 'base32')", id).Scan(&enc))
	var back int64
	must(conn.QueryRow(ctx, "SELECT snowflake_decode_text($1, 'base32')", enc).Scan(&back))
	report(len(enc) == 13 && strconv.FormatInt(back, 10) == sqlText,
		"snowflake_encode(id, 'base32') and snowflake_decode_text give the id back",
		fmt.Sprintf("%q -> %d, SQL %s", enc, back, sqlText))

	// JSON: an int64 field with the ",string" option is written as a string;
	// a number read into interface{} becomes a float64 (and rounds),
	// json.Decoder.UseNumber keeps it.
	type order struct {
		ID int64 `json:"id,string"`
	}
	out, _ := json.Marshal(order{ID: id})
	var in order
	err = json.Unmarshal(out, &in)
	report(err == nil && string(out) == `{"id":"`+sqlText+`"}` && strconv.FormatInt(in.ID, 10) == sqlText,
		`json:"id,string" writes the id as a string and reads it back exact`, string(out))
	var loose map[string]interface{}
	must(json.Unmarshal([]byte(`{"id":`+sqlText+`}`), &loose))
	f, isFloat := loose["id"].(float64)
	dec := json.NewDecoder(strings.NewReader(`{"id":` + sqlText + `}`))
	dec.UseNumber()
	var kept map[string]interface{}
	must(dec.Decode(&kept))
	report(isFloat && strconv.FormatFloat(f, 'f', 0, 64) != sqlText == (raw%32 != 0) &&
		string(kept["id"].(json.Number)) == sqlText,
		"a JSON number read into interface{} is a float64 (rounded unless a multiple of 32); UseNumber keeps it",
		fmt.Sprintf("%v, %v", loose["id"], kept["id"]))

	if failed {
		os.Exit(1)
	}
}
