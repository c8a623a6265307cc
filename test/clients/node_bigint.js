// What node-postgres does with Snowflake ids (bigint, above 2^53), against a
// live server: run by test/clients/node_bigint.sh, which passes the socket
// directory and port. Prints "ok"/"not ok" lines and a summary; exits 1 if
// a check fails.
'use strict';
const pg = require('pg');

const N = 50;
let failed = 0;
let n = 0;
const report = (ok, what, detail) => {
    n++;
    console.log(`${ok ? 'ok' : 'not ok'} ${n} - ${what}${!ok && detail ? ` (${detail})` : ''}`);
    if (!ok) failed = 1;
};

async function main() {
    const config = { host: process.argv[2], port: Number(process.argv[3]), user: 'postgres', database: 'postgres' };

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
    process.exit(failed);
}

main().catch((e) => { console.error(e); process.exit(1); });
