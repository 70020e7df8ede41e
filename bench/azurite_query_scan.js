// What one query request costs Azurite as its table grows, whatever the partition: Azurite's own query path
// (LokiTableMetadataStore.queryTableEntities, which filters every entity of the table, then sorts) timed on tables of
// growing size, the entities inserted straight into its Loki collection (no HTTP, no seeding through the API), a
// partition read of a few rows like the history's window query makes, and a point read by keys for comparison.
// Run: node bench/azurite_query_scan.js . 22000 100000 300000 700000   (the project folder, then the table sizes)
const path = require("path");
const base = path.resolve(process.argv[2], "node_modules/azurite/dist/src/table/persistence");
const Store = require(path.join(base, "LokiTableMetadataStore.js")).default;
async function main() {
  const sizes = process.argv.slice(3).map(Number);
  for (const size of sizes) {
    const store = new Store(path.join(require("os").tmpdir(), "azurite-query-scan-" + size), true);
    await store.init();
    const ctx = {};
    await store.createTable(ctx, { account: "devstoreaccount1", table: "hist" });
    const coll = store.getEntityCollection("devstoreaccount1", "hist", ctx);
    const parts = 20000;  // partitions of ~size/parts rows each
    for (let i = 0; i < size; i++) {
      const pk = "d-" + String(i % parts).padStart(8, "0");
      const rk = "read-c-" + String(9000000000000 - i).padStart(13, "0") + "-run" + i;
      coll.insert({ PartitionKey: pk, RowKey: rk, properties: { PartitionKey: pk, RowKey: rk, facts: "{\"x\":1}", access: "read" }, lastModifiedTime: new Date(), eTag: "W/x" + i });
    }
    const filter = "PartitionKey eq 'd-00000042' and RowKey ge 'read-c-0000000000000' and RowKey lt 'read-c-9999999999999'";
    const times = [];
    let rows = 0;
    for (let r = 0; r < 7; r++) {
      const t = process.hrtime.bigint();
      const [result] = await store.queryTableEntities(ctx, "devstoreaccount1", "hist", { filter, top: 1000 }, undefined, undefined);
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
      rows = result.length;
    }
    times.sort((a, b) => a - b);
    const tp = process.hrtime.bigint();
    for (let r = 0; r < 100; r++) coll.findOne({ PartitionKey: "d-00000042", RowKey: "read-c-" + String(9000000000000 - 42).padStart(13, "0") + "-run42" });
    const point = Number(process.hrtime.bigint() - tp) / 1e6 / 100;
    console.log(JSON.stringify({ rows_in_table: size, rows_answered: rows, query_ms_median: +times[3].toFixed(2), point_read_ms: +point.toFixed(3) }));
  }
}
main();
