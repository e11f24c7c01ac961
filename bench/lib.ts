/** Small shared pieces of the bench harnesses: stats, flags, the machine, result files and tables. */
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { createKey } from "../src/accounts/keys.js";
import { Admission } from "../src/accounts/admission.js";
import { Limiter } from "../src/accounts/limits.js";
import type { Sync } from "../src/accounts/ledger-protocol.js";
import { openSqliteStore, type SqliteStore } from "../src/accounts/sqlite-store.js";
import { ROUTES } from "../src/api/routes.js";
import type { Engine } from "../src/engine/engine.js";
import { startServer } from "../src/http/server.js";
import { ROOT, tempDir } from "../test/helpers/service.js";
import { AnswerCache } from "../src/api/answer-cache.js";

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Nearest-rank percentile of unsorted samples (p in 0..100). */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** Least-squares line y = a + b·x. */
export function fitLine(xs: number[], ys: number[]): { a: number; b: number; r2: number } {
  const n = xs.length;
  const mx = xs.reduce((s, x) => s + x, 0) / n;
  const my = ys.reduce((s, y) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  }
  const b = sxy / sxx;
  return { a: my - b * mx, b, r2: syy === 0 ? 1 : (sxy * sxy) / (sxx * syy) };
}

/** `--name value` / `--name=value` flags as numbers, with defaults. */
export function numberFlag(name: string, fallback: number, argv: string[] = process.argv.slice(2)): number {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const raw = a === `--${name}` ? argv[i + 1] : a.startsWith(`--${name}=`) ? a.slice(name.length + 3) : undefined;
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} needs a number >= 0, got ${raw}`);
    return n;
  }
  return fallback;
}

export interface Machine {
  date: string;
  node: string;
  cpuModel: string;
  cpuCount: number;
  /** 1-minute load average when the bench started: other processes share these CPUs. */
  loadAvgAtStart: number;
}

export function machine(): Machine {
  const c = cpus();
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpuModel: c[0]?.model.trim() ?? "unknown",
    cpuCount: c.length,
    loadAvgAtStart: round(loadavg()[0]),
  };
}

/** Writes bench/results/<name>.json (the committed record of a run) and says where. */
export function writeResult(name: string, started: Machine, data: object): void {
  const dir = join(ROOT, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  const record = { bench: name, ...started, loadAvgAtEnd: round(loadavg()[0]), ...data };
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`\nwrote bench/results/${name}.json (load average ${started.loadAvgAtStart} -> ${record.loadAvgAtEnd})`);
}

/** Prints rows as an aligned text table. */
export function printTable(rows: Record<string, string | number>[]): void {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? "").length)));
  const line = (cells: string[]) => cells.map((s, i) => s.padStart(width[i])).join("  ");
  console.log(line(cols));
  for (const r of rows) console.log(line(cols.map((c) => String(r[c] ?? ""))));
}

export function header(title: string, m: Machine): void {
  console.log(`${title}\n${m.cpuCount} x ${m.cpuModel}, node ${m.node}, load average ${m.loadAvgAtStart}\n`);
}

/** The part of autocannon's programmatic API used here (the package ships no types). */
export interface CannonOptions {
  /** Several URLs: the connections are spread over them. */
  url: string | string[];
  connections: number;
  duration: number;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Run the load generator in worker threads, off the event loop of a server in this process. */
  workers?: number;
}

interface Histogram {
  average: number;
  p50: number;
  p99: number;
  max: number;
}

export interface CannonResult {
  requests: Histogram & { total: number };
  latency: Histogram;
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}

const require = createRequire(import.meta.url);
export const autocannon = require("autocannon") as (opts: CannonOptions) => Promise<CannonResult>;

export interface InProcess {
  url: string;
  key: string;
  store: SqliteStore;
  close(): Promise<void>;
}

/** The real routes and server in this process, on a fresh SQLite file, every limit off. */
export async function startInProcess(engine: Engine, sync: Sync = "full"): Promise<InProcess> {
  const store = openSqliteStore(join(tempDir(), "svc.sqlite"), { sync, startLedger: true });
  const off = { perMinute: null, perDay: null, monthlyTokens: null };
  const { key } = await createKey(store, "bench", off);
  await engine.load();
  const server = await startServer(
    ROUTES,
    { engine: { engine, state: "ready" }, store, limiter: new Limiter(store, off), admission: new Admission({ perKey: 0, total: 0 }), cache: new AnswerCache({ windowMs: 0, entries: 0, shared: null }), bodyTimeoutMs: 10_000, log: "off" },
    "127.0.0.1",
    0,
  );
  return {
    url: server.url,
    key,
    store,
    async close() {
      await server.shutdown(2000);
      await store.close();
    },
  };
}

const STATE_WORDS =
  "Hello, I ordered running shoes last week and the parcel arrived today, but the box was damaged and one shoe " +
  "is a different size from the other. Can I get a replacement quickly, or should I ask for my money back?";

/**
 * A /v1/systemone body with `questions` choice questions of `options` options each, a state of about
 * 60 tokens, and every text made unique by `nonce` (so no embedding can come from the engine's cache).
 */
export function choiceBody(nonce: string, questions = 1, options = 4): { model: string; state: string; questions: Record<string, unknown> } {
  const qs: Record<string, unknown> = {};
  for (let q = 0; q < questions; q++) {
    const criteria: Record<string, string> = {};
    for (let o = 0; o < options; o++) criteria[`option_${o}`] = `answer number ${o} for case ${nonce} question ${q}`;
    qs[`q${q}`] = { type: "choice", instructions: `Which answer fits case ${nonce} best, for question ${q}?`, criteria };
  }
  return { model: "svc-latest", state: `Case ${nonce}. ${STATE_WORDS}`, questions: qs };
}
