const { PGlite } = require('@electric-sql/pglite');
(async () => {
  const t = Date.now();
  const dbs = [];
  for (let i = 0; i < 7; i++) { const db = new PGlite('/tmp/pgl/' + i); await db.waitReady; await db.exec('create schema if not exists s; create table if not exists s.t(id int)'); dbs.push(db); console.log(i, Date.now() - t, 'ms', Math.round(process.memoryUsage().rss / 1e6), 'MB'); }
})();
