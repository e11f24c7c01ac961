/**
 * Requests per second and latency of 1, 2 and 3 `svc serve` instances sharing PostgreSQL (keys,
 * usage) and Redis (limit counters), against one instance on the embedded SQLite file, in the same
 * run. Each instance is a real `svc serve` process with the built-in model (one inference thread);
 * every request is the same small noul question, so after warm-up its embeddings come from the
 * model's cache and what is measured is the request path: auth, limits (three Redis scripts a request
 * on the shared setup), usage record committed before the answer (PostgreSQL or SQLite). autocannon
 * spreads its connections over the instances. The usage rows written are counted against the 200s
 * received: a few more rows than 200s are requests that autocannon cut off at the end of its run after
 * the instance had committed them (at most one per connection).
 *
 * On a machine with few cores the instances, the load generator, PostgreSQL and Redis share the
 * same cores: more instances cannot add throughput there, and the figures show the cost of the
 * shared state, not scaling.
 *
 *   npm run bench:scale [-- --duration 5 --connections 24 --rounds 2]
 */
import { startService, tempDir, type Service } from "../test/helpers/service.js";
import { createScratch } from "../test/helpers/shared-state.js";
import { autocannon, header, machine, numberFlag, printTable, round, sleep, writeResult } from "./lib.js";

const BODY = JSON.stringify({
  model: "svc-latest",
  state: "Please cancel my order, it has not shipped yet.",
  questions: { q: { type: "noul", instructions: "Does the customer want to cancel?" } },
});
const KEY = `svc_5ca1e000_${"b".repeat(43)}`;

interface Setup {
  name: string;
  instances: number;
  shared: boolean;
}

const SETUPS: Setup[] = [
  { name: "sqlite x1", instances: 1, shared: false },
  { name: "pg+redis x1", instances: 1, shared: true },
  { name: "pg+redis x2", instances: 2, shared: true },
  { name: "pg+redis x3", instances: 3, shared: true },
];

async function main(): Promise<void> {
  const m = machine();
  header("bench:scale: 1-3 instances on PostgreSQL + Redis against one on SQLite", m);
  const duration = numberFlag("duration", 5);
  const connections = numberFlag("connections", 24);
  const rounds = numberFlag("rounds", 2);
  const scratch = await createScratch("bench");
  const common = { SVC_PER_MINUTE: "0", SVC_PER_DAY: "0", SVC_MONTHLY_TOKENS: "0", SVC_WORKERS: "1" };
  const shared = { SVC_DATABASE_URL: scratch.databaseUrl(), SVC_REDIS_URL: "redis://127.0.0.1:6379", SVC_REDIS_PREFIX: scratch.redisPrefix };
  const sqliteDir = tempDir();
  const svcs: Service[] = [];
  const runs: Run[] = [];
  try {
    // All four instances stay up for the whole run (an idle one costs nothing), so that rounds can
    // alternate between setups and drift in the machine's load hits them alike. Started one at a
    // time: the first on PostgreSQL migrates and creates the key, and model loads do not compete.
    svcs.push(await startService({ key: KEY, dataDir: sqliteDir, env: common }));
    for (let i = 0; i < 3; i++) svcs.push(await startService({ key: KEY, env: { ...common, ...shared } }));
    const targets = (setup: Setup): Service[] => (setup.shared ? svcs.slice(1, 1 + setup.instances) : svcs.slice(0, 1));
    const rowCount = (setup: Setup) => (setup.shared ? pgRows(scratch.db) : sqliteRows(sqliteDir));
    const fire = (setup: Setup, seconds: number) =>
      autocannon({
        url: targets(setup).map((s) => `${s.url}/v1/systemone`),
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: BODY,
        connections,
        duration: seconds,
        workers: 1,
      });
    for (const setup of SETUPS) await fire(setup, 1);
    for (let n = 0; n < rounds; n++) {
      for (const setup of SETUPS) {
        // The last requests of the run before, cut off by autocannon, finish (and are billed) first.
        await sleep(500);
        const before = await rowCount(setup);
        const res = await fire(setup, duration);
        await sleep(500);
        const ok = res.statusCodeStats["200"]?.count ?? 0;
        runs.push({
          setup: setup.name,
          rps: round(res.requests.total / res.duration, 0),
          p50: res.latency.p50,
          p99: res.latency.p99,
          requests: res.requests.total,
          non2xx: res.non2xx,
          errors: res.errors,
          responses200: ok,
          usageRowsWritten: (await rowCount(setup)) - before,
        });
      }
    }
  } finally {
    await Promise.all(svcs.map((s) => s.stop()));
    await scratch.drop();
  }
  const mean = (name: string, f: (r: Run) => number): number => {
    const xs = runs.filter((r) => r.setup === name).map(f);
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  const base = { rps: mean(SETUPS[0].name, (r) => r.rps), p50: mean(SETUPS[0].name, (r) => r.p50) };
  console.log(`${connections} connections spread over each setup's instances, ${duration} s per run, ${rounds} rounds`);
  printTable(runs.map((r) => ({ setup: r.setup, "req/s": r.rps, "p50 ms": r.p50, "p99 ms": r.p99, requests: r.requests, non2xx: r.non2xx, errors: r.errors, "rows - 200s": r.usageRowsWritten - r.responses200 })));
  const summary = SETUPS.map((s) => ({
    setup: s.name,
    "req/s": round(mean(s.name, (r) => r.rps), 0),
    "vs sqlite": round(mean(s.name, (r) => r.rps) / base.rps, 2),
    "p50 ms": round(mean(s.name, (r) => r.p50), 1),
    "extra p50 ms": round(mean(s.name, (r) => r.p50) - base.p50, 1),
    "p99 ms": round(mean(s.name, (r) => r.p99), 1),
  }));
  console.log("\nmeans over the rounds");
  printTable(summary);
  writeResult("scale", m, { durationS: duration, connections, rounds, request: "1 noul question, cached embeddings", runs, summary });
}

interface Run {
  setup: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  responses200: number;
  usageRowsWritten: number;
}

async function pgRows(db: import("pg").Client): Promise<number> {
  return Number((await db.query<{ n: string }>("SELECT COUNT(*) AS n FROM usage")).rows[0].n);
}

/** Usage rows in an instance's SQLite file. */
async function sqliteRows(dir: string): Promise<number> {
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(`${dir}/svc.sqlite`, { readonly: true });
  try {
    return (db.prepare("SELECT COUNT(*) AS n FROM usage").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

await main();
