// What node-postgres does with Snowflake ids, against live servers: run by
// test/clients/node_bigint.sh, which passes the socket directories of two
// instances (the default layout, twitter, and snowflake.layout = 'js-safe')
// and their port. Twitter ids are above 2^53: parts 1 to 3 show what the usual
// conversions do to them and that a BigInt parser reads them exactly. Js-safe
// ids are below 2^53: part 4 reads them with the int8 parser set to Number and
// through JSON the server builds, and finds every one exact; the same code on
// the twitter instance must find ids changed (the control). Prints "ok"/"not
// ok" lines and "#" notes; exits 1 if a check fails.
'use strict';
const pg = require('pg');

const N = 50;
const BATCH = 1000;  // js-safe: 64 ids a millisecond, so a batch fills 16 ms or more
let failed = 0;
let n = 0;
const report = (ok, what, detail) => {
    n++;
    console.log(`${ok ? 'ok' : 'not ok'} ${n} - ${what}${!ok && detail ? ` (${detail})` : ''}`);
    if (!ok) failed = 1;
};

async function main() {
    const port = Number(process.argv[4]);
    const config = { host: process.argv[2], port, user: 'postgres', database: 'postgres' };
    const jsSafeConfig = { host: process.argv[3], port, user: 'postgres', database: 'postgres' };

    // 1. Defaults: int8 arrives as a string, exact.
    let client = new pg.Client(config);
    await client.connect();
    const res = await client.query(
        `SELECT id, id::text AS text FROM (SELECT snowflake_nextval() AS id FROM generate_series(1, ${N})) s`);
    await client.end();
    const ids = res.rows.map((r) => r.id);
    report(ids.every((v, i) => typeof v === 'string' && v === res.rows[i].text),
           `by default the ${N} ids arrive as strings, exact`);

    // 2. What the usual conversions do to them.
    // An id is changed when the number is not the id any more; printed back
    // (String(), JSON.stringify, a query parameter) even some exact ones
    // come out as other digits: doubles print their shortest round trip.
    const changed = (f) => ids.filter((s) => BigInt(f(s)) !== BigInt(s)).length;
    const printed = (f) => ids.filter((s) => String(f(s)) !== s).length;
    const distinct = (f) => new Set(ids.map((s) => String(f(s)))).size;
    const number = changed(Number);
    const parse = changed((s) => parseInt(s, 10));
    const json = changed((s) => JSON.parse(`{"id":${s}}`).id);
    const above = ids.filter((s) => BigInt(s) > BigInt(Number.MAX_SAFE_INTEGER)).length;
    console.log(`# ${above} of ${N} ids are above Number.MAX_SAFE_INTEGER (2^53 - 1); first ${ids[0]}, last ${ids[N - 1]}`);
    console.log(`# Number(): ${number} of ${N} values changed, ${printed(Number)} of ${N} print as other digits, ` +
                `${distinct(Number)} distinct values left`);
    console.log(`# parseInt(): ${parse} of ${N} changed; JSON.parse of {"id":<id>}: ${json} of ${N} changed`);
    console.log(`# for example ${ids[1]} -> Number() -> ${String(Number(ids[1]))}`);
    report(above === N, 'every id is above 2^53');
    report(number > 0 && number === parse && number === json,
           'Number(), parseInt() and JSON.parse change the same ids, and some at least', `${number}/${parse}/${json}`);
    const spacing = 2n ** BigInt(BigInt(ids[0]).toString(2).length - 53);  // distance between doubles there
    report(ids.every((s) => (BigInt(Number(s)) === BigInt(s)) === (BigInt(s) % spacing === 0n)),
           `the ids whose value survives Number() are exactly the multiples of ${spacing} (the distance between doubles there)`);

    // 3. The fix: parse int8 as BigInt.
    pg.types.setTypeParser(20, BigInt);
    pg.types.setTypeParser(1016, (text) => require('postgres-array').parse(text, BigInt));
    client = new pg.Client(config);
    await client.connect();
    const res2 = await client.query(
        `SELECT id, id::text AS text FROM (SELECT snowflake_nextval() AS id FROM generate_series(1, ${N})) s`);
    // BigInt parameters go back to the server exactly.
    const back = await client.query('SELECT $1::bigint::text AS text', [res2.rows[0].id]);
    const arr = await client.query(
        `SELECT array_agg(id) AS a, array_agg(id::text) AS t
         FROM (SELECT snowflake_nextval() AS id FROM generate_series(1, ${N})) s`);
    // JSON built in SQL carries bigints as JSON numbers, which the json
    // parser of node-postgres reads with JSON.parse, whatever the int8 parser.
    const built = await client.query(
        `SELECT json_agg(json_build_object('id', id, 'id_text', id::text)) AS j
         FROM (SELECT snowflake_nextval() AS id FROM generate_series(1, ${N})) s`);
    await client.end();
    report(res2.rows.every((r) => typeof r.id === 'bigint' && r.id.toString() === r.text),
           `with setTypeParser(20, BigInt) all ${N} ids are exact BigInts`);
    report(back.rows[0].text === res2.rows[0].text, 'a BigInt parameter reaches the server exactly');
    report(arr.rows[0].a.length === N && arr.rows[0].a.every((v, i) => typeof v === 'bigint' && v.toString() === arr.rows[0].t[i]),
           'bigint[] with the postgres-array parser: exact BigInts');
    const jsonChanged = built.rows[0].j.filter((o) => BigInt(o.id) !== BigInt(o.id_text)).length;
    console.log(`# json_build_object('id', id): ${jsonChanged} of ${N} ids changed even with the BigInt parser; ` +
                `'id', id::text: 0`);
    report(jsonChanged > 0 && built.rows[0].j.every((o) => typeof o.id === 'number' && typeof o.id_text === 'string'),
           'ids inside JSON built by the server arrive as numbers (changed); cast them to text there');
    let threw = false;
    try { JSON.stringify({ id: res2.rows[0].id }); } catch (e) { threw = e instanceof TypeError; }
    report(threw, 'JSON.stringify refuses a BigInt (TypeError): send ids to JSON as strings');
    console.log(`# summary: Number() changed ${number} of ${N} ids (${printed(Number)} print differently); ` +
                `BigInt parser: 0 of ${N}`);

    // 4. Js-safe ids read as numbers, what a JavaScript app of a js-safe node
    // wants; the same code reads the twitter instance's ids as the control.
    pg.types.setTypeParser(20, Number);
    const safe = await numberRun(jsSafeConfig);
    const total = safe.rows.length;
    const f = safe.facts;
    console.log(`# js-safe: layout ${safe.layout}, ${total} ids: ${N} from snowflake_nextval(), ` +
                `${BATCH} from snowflake_nextval_batch(${BATCH}) over ${f.batch_ms} milliseconds, ` +
                `and the layout's last id ${safe.rows[total - 1].text}; largest issued ${f.max_issued}`);
    report(safe.layout === 'js-safe' && f.worker_7 === true && f.batch_ms >= Math.ceil(BATCH / 64),
           `the js-safe instance issues js-safe ids of worker 7, its batch over at least ${Math.ceil(BATCH / 64)} ms`,
           `layout ${safe.layout}, worker 7: ${f.worker_7}, batch over ${f.batch_ms} ms`);
    report(safe.above === 0 && safe.rows[total - 1].text === String(Number.MAX_SAFE_INTEGER),
           `all ${total} js-safe ids are at most Number.MAX_SAFE_INTEGER, the last id of the layout equal to it`,
           `${safe.above} above, last ${safe.rows[total - 1].text}`);
    report(safe.notNumber === 0 && safe.parsed === 0 && safe.rows[total - 1].id === Number.MAX_SAFE_INTEGER,
           `with setTypeParser(20, Number) all ${total} js-safe ids arrive as numbers equal to the server's id::text`,
           `${safe.notNumber} not numbers, ${safe.parsed} changed`);
    report(safe.json === 0 && safe.jsonb === 0,
           `in JSON built by the server (json_build_object/json_agg, to_jsonb(row)/jsonb_agg) all ${total} js-safe ids ` +
           'arrive as numbers equal to the ids', `json: ${safe.json} changed, jsonb: ${safe.jsonb} changed`);
    report(safe.stringify === 0, `JSON.stringify of each row object gives the id's digits exactly (${total} rows)`,
           `${safe.stringify} differ`);
    report(safe.param === 0, `each id as a number parameter reaches the server exactly ($1::bigint::text, ${total} ids)`,
           `${safe.param} differ`);

    const tw = await numberRun(config);
    console.log(`# control, the same code on the twitter instance (layout ${tw.layout}), ${tw.rows.length} ids: ` +
                `${tw.above} above 2^53; changed by the Number parser ${tw.parsed}, in json ${tw.json}, ` +
                `in jsonb ${tw.jsonb}; JSON.stringify ${tw.stringify} and number parameters ${tw.param} ` +
                'give other digits');
    report(tw.parsed > 0 && tw.json > 0 && tw.jsonb > 0 && tw.stringify > 0 && tw.param > 0,
           'control: on the twitter instance the same Number parser, JSON, JSON.stringify and parameters change ids',
           `${tw.parsed}/${tw.json}/${tw.jsonb}/${tw.stringify}/${tw.param}`);
    console.log(`# summary: js-safe ids changed by the Number parser ${safe.parsed} of ${total}, in json ${safe.json}, ` +
                `in jsonb ${safe.jsonb}, by JSON.stringify ${safe.stringify}, as parameters ${safe.param}; ` +
                `twitter ids changed by the Number parser ${tw.parsed} of ${tw.rows.length}`);
    process.exit(failed);
}

// numberRun(config): on the instance, N ids from snowflake_nextval(), BATCH
// from one snowflake_nextval_batch(BATCH), and the id of worker 63, sequence
// 63 in the last millisecond of the 41-bit time field (2^53 - 1 in js-safe),
// read with the int8 parser in force (part 4: Number), as rows and inside
// JSON the server builds, printed with JSON.stringify and sent back as
// parameters. Each measure counts the ids that differ from the server's text
// of them.
async function numberRun(config) {
    const client = new pg.Client(config);
    await client.connect();
    await client.query('CREATE TEMP TABLE ids (n serial, source text, id bigint)');
    await client.query(`INSERT INTO ids (source, id) SELECT 'nextval', snowflake_nextval() FROM generate_series(1, ${N})`);
    await client.query(`INSERT INTO ids (source, id) SELECT 'batch', snowflake_nextval_batch(${BATCH})`);
    await client.query(`INSERT INTO ids (source, id) SELECT 'last', snowflake_compose(
                            current_setting('snowflake.epoch')::timestamptz + interval '1 millisecond' * (2^41 - 1),
                            63, 63)`);
    const layout = (await client.query('SELECT layout FROM snowflake_stats')).rows[0].layout;
    const facts = (await client.query(
        `SELECT count(DISTINCT snowflake_timestamp(id)) FILTER (WHERE source = 'batch')::int AS batch_ms,
                bool_and(snowflake_worker_id(id) = 7) FILTER (WHERE source <> 'last') AS worker_7,
                (max(id) FILTER (WHERE source <> 'last'))::text AS max_issued
         FROM ids`)).rows[0];
    const rows = (await client.query('SELECT id, id::text AS text FROM ids ORDER BY n')).rows;
    const built = (await client.query(
        `SELECT json_agg(json_build_object('id', id, 'id_text', id::text) ORDER BY n) AS j,
                jsonb_agg(to_jsonb(i) || jsonb_build_object('id_text', id::text) ORDER BY n) AS b
         FROM ids i`)).rows[0];
    const back = [];
    for (const r of rows) back.push(await client.query('SELECT $1::bigint::text AS text', [r.id]));
    await client.end();

    // JSON.stringify throws on a BigInt (an int8 parser other than Number): that row differs.
    const stringified = (r) => { try { return JSON.stringify(r); } catch (e) { return `${e}`; } };
    const exact = (v, text) => typeof v === 'number' && Number.isInteger(v) && BigInt(v) === BigInt(text);
    const count = (list, bad) => list.filter(bad).length;
    return {
        layout, facts, rows,
        above: count(rows, (r) => BigInt(r.text) > BigInt(Number.MAX_SAFE_INTEGER)),
        notNumber: count(rows, (r) => typeof r.id !== 'number'),
        parsed: count(rows, (r) => !exact(r.id, r.text)),
        json: built.j.length === rows.length ? count(built.j, (o) => !exact(o.id, o.id_text)) : -1,
        jsonb: built.b.length === rows.length ? count(built.b, (o) => !exact(o.id, o.id_text)) : -1,
        stringify: count(rows, (r) => stringified(r) !== `{"id":${r.text},"text":"${r.text}"}`),
        param: count(rows, (r, i) => back[i].rows[0].text !== r.text),
    };
}

main().catch((e) => { console.error(e); process.exit(1); });
