/**
 * Load and fault scenarios against a real `svc serve` child process, shared by test/load.test.ts (short)
 * and bench/load.ts (long). Each scenario returns its measured numbers and `problems`: the properties
 * it found broken, in words, with the numbers (empty when all hold).
 */
import { Agent, request } from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { awayFromMinuteEdge, cli, startService, tempDir } from "./service.js";

export interface Outcome {
  /** HTTP status, or null when the connection failed (refused, reset). */
  status: number | null;
  error: string | null;
  requestId: string | null;
  /** error.type and error.limit of an error body. */
  errorType: string | null;
  errorLimit: string | null;
  /** performance.now() when the request was started, and its duration. */
  startedAt: number;
  ms: number;
}

const STATES = [
  "My card was charged twice for the same order and I want one of the payments back.",
  "The parcel says delivered but nothing is at my door; the tracking page has not changed in days.",
  "I cannot log in since I changed my phone: the code never arrives.",
  "Love the jacket, but the sleeves are too long. Can I swap it for a smaller size?",
];

const RUN = Date.now().toString(36);

/**
 * A realistic request: common questions about a customer message. With `variety` 0 every state is
 * new (real inference for every request, and the engine's embedding cache grows until its bound of
 * 20,000 entries, about 7 KB per request here); with `variety` N the states cycle through N texts,
 * so the cache stops growing after their first pass.
 */
export function loadBody(n: number, variety = 0): Buffer {
  const ticket = variety > 0 ? n % variety : n;
  return Buffer.from(
    JSON.stringify({
      model: "svc-latest",
      state: `Ticket ${ticket} (${RUN}): ${STATES[ticket % STATES.length]}`,
      questions: {
        topic: { type: "choice", instructions: "What is this about?", criteria: { billing: "payments, refunds", shipping: "delivery, tracking", account: "login, password", returns: "exchanges, returns" } },
        urgent: { type: "noul", instructions: "Does the customer need help today?" },
        mood: { type: "score", instructions: "How upset is the customer?", criteria: ["calm", "annoyed", "angry"] },
      },
    }),
  );
}

/** One POST over `agent`; never rejects (connection errors are outcomes too). */
export function send(url: string, path: string, key: string, body: Buffer, agent: Agent): Promise<Outcome> {
  const startedAt = performance.now();
  return new Promise((resolve) => {
    const done = (o: Partial<Outcome>) =>
      resolve({ status: null, error: null, requestId: null, errorType: null, errorLimit: null, ...o, startedAt, ms: performance.now() - startedAt });
    const req = request(`${url}${path}`, {
      method: "POST",
      agent,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": body.length },
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", (err) => done({ error: err.message }));
      res.on("end", () => {
        const status = res.statusCode ?? 0;
        let errorType: string | null = null;
        let errorLimit: string | null = null;
        if (status !== 200) {
          try {
            const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { error?: { type?: string; limit?: string } };
            errorType = parsed.error?.type ?? null;
            errorLimit = parsed.error?.limit ?? null;
          } catch {
            errorType = "(not JSON)";
          }
        }
        done({ status, requestId: (res.headers["x-request-id"] as string | undefined) ?? null, errorType, errorLimit });
      });
    });
    req.on("error", (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
    req.end(body);
  });
}

/**
 * `concurrency` clients, each with its own connection, sending one request after the other until
 * `stop()` is true. After a connection error a client waits a little (the server may be gone).
 */
export async function hammer(
  svc: { url: string; key: string },
  opts: { concurrency: number; stop: () => boolean; variety?: number; body?: (n: number) => Buffer; path?: string },
): Promise<Outcome[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const outcomes: Outcome[] = [];
  let n = 0;
  const client = async (): Promise<void> => {
    while (!opts.stop()) {
      const o = await send(svc.url, opts.path ?? "/v1/systemone", svc.key, (opts.body ?? ((i: number) => loadBody(i, opts.variety)))(n++), agent);
      outcomes.push(o);
      if (o.status === null) await new Promise((r) => setTimeout(r, 25));
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, client));
  agent.destroy();
  return outcomes;
}

/** Resident memory of a process in KiB (VmRSS of /proc/<pid>/status). */
export function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]);
}

/** Opens the service's SQLite file (read-write, so a crashed WAL is recovered as the server would). */
export function openDb(dataDir: string): Database.Database {
  return new Database(join(dataDir, "svc.sqlite"));
}

export function usageIds(dataDir: string): Set<string> {
  const db = openDb(dataDir);
  try {
    return new Set((db.prepare("SELECT request_id FROM usage").pluck().all() as string[]));
  } finally {
    db.close();
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function tally(outcomes: Outcome[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const o of outcomes) {
    const k = o.status === null ? `error ${o.error}` : String(o.status);
    t[k] = (t[k] ?? 0) + 1;
  }
  return t;
}

/** Serving env for load: no server-wide limits, no request log. */
export const LOAD_ENV = { SVC_PER_MINUTE: "0", SVC_PER_DAY: "0", SVC_MONTHLY_TOKENS: "0" };

export interface SustainedResult {
  concurrency: number;
  variety: number;
  warmupMs: number;
  durationMs: number;
  counts: Record<string, number>;
  ok: number;
  usageRows: number;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  rssAfterWarmupKb: number;
  rssAtEndKb: number;
  rssGrowth: number;
  problems: string[];
}

/**
 * Sustained load: warm up, take RSS, load for `durationMs`, take RSS again. Every 200 must have its
 * usage row (and no row without a 200), no 5xx, and RSS may grow by at most `rssMargin`.
 */
export async function sustained(opts: {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  rssMargin: number;
  variety: number;
  /** Called every few seconds with the elapsed ms and the server's RSS (for a time series). */
  onSample?: (ms: number, rssKb: number) => void;
}): Promise<SustainedResult> {
  const svc = await startService({ env: LOAD_ENV });
  const pid = svc.proc.pid!;
  const started = performance.now();
  const sampler = setInterval(() => opts.onSample?.(performance.now() - started, rssKb(pid)), 5000);
  try {
    let until = performance.now() + opts.warmupMs;
    const warm = await hammer(svc, { concurrency: opts.concurrency, variety: opts.variety, stop: () => performance.now() > until });
    const rssAfterWarmupKb = rssKb(pid);
    const t0 = performance.now();
    until = t0 + opts.durationMs;
    const main = await hammer(svc, { concurrency: opts.concurrency, variety: opts.variety, stop: () => performance.now() > until });
    const elapsed = performance.now() - t0;
    const rssAtEndKb = rssKb(pid);
    const all = [...warm, ...main];
    const ok = all.filter((o) => o.status === 200);
    const usageRows = usageIds(svc.dataDir).size;
    const latencies = main.filter((o) => o.status === 200).map((o) => o.ms).sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
    const rssGrowth = rssAtEndKb / rssAfterWarmupKb - 1;
    const counts = tally(all);
    const problems: string[] = [];
    const bad = all.filter((o) => o.status !== 200);
    if (bad.length > 0) problems.push(`${bad.length} responses other than 200: ${JSON.stringify(counts)}`);
    if (usageRows !== ok.length) problems.push(`${ok.length} responses 200 but ${usageRows} usage rows`);
    if (rssGrowth > opts.rssMargin) {
      problems.push(
        `RSS grew ${(rssGrowth * 100).toFixed(1)}% (${rssAfterWarmupKb} KiB after warm-up -> ${rssAtEndKb} KiB at the end), margin ${opts.rssMargin * 100}%`,
      );
    }
    return {
      concurrency: opts.concurrency,
      variety: opts.variety,
      warmupMs: opts.warmupMs,
      durationMs: opts.durationMs,
      counts,
      ok: ok.length,
      usageRows,
      requestsPerSecond: (main.filter((o) => o.status === 200).length / elapsed) * 1000,
      latencyP50Ms: pct(50),
      latencyP99Ms: pct(99),
      rssAfterWarmupKb,
      rssAtEndKb,
      rssGrowth,
      problems,
    };
  } finally {
    clearInterval(sampler);
    await svc.stop();
  }
}

export interface KillResult {
  counts: Record<string, number>;
  ok: number;
  missingRows: number;
  /** Rows whose request never got its 200 (committed, then the process died before answering). */
  rowsWithout200: number;
  integrity: string;
  restartedStatus: number | null;
  problems: string[];
}

/** SIGKILL in the middle of load, then restart on the same data dir. */
export async function killMidLoad(opts: { concurrency: number; loadMs: number }): Promise<KillResult> {
  const dataDir = tempDir();
  const svc = await startService({ env: LOAD_ENV, dataDir });
  let killed = false;
  const load = hammer(svc, { concurrency: opts.concurrency, stop: () => killed });
  await sleep(opts.loadMs);
  killed = true;
  await svc.stop("SIGKILL");
  const outcomes = await load;
  const ok = outcomes.filter((o) => o.status === 200);
  const db = openDb(dataDir);
  let integrity: string;
  let ids: Set<string>;
  try {
    integrity = String(db.pragma("integrity_check", { simple: true }));
    ids = new Set(db.prepare("SELECT request_id FROM usage").pluck().all() as string[]);
  } finally {
    db.close();
  }
  const missing = ok.filter((o) => !o.requestId || !ids.has(o.requestId));
  const answered = new Set(ok.map((o) => o.requestId));
  const restarted = await startService({ env: LOAD_ENV, dataDir, key: svc.key });
  let restartedStatus: number | null;
  try {
    restartedStatus = (await send(restarted.url, "/v1/systemone", restarted.key, loadBody(0), new Agent())).status;
  } finally {
    await restarted.stop();
  }
  const problems: string[] = [];
  if (ok.length === 0) problems.push("no request succeeded before the kill");
  if (missing.length > 0) problems.push(`${missing.length} of ${ok.length} responses 200 have no usage row (e.g. ${missing[0].requestId})`);
  if (integrity !== "ok") problems.push(`integrity_check: ${integrity}`);
  if (restartedStatus !== 200) problems.push(`the restarted server answered ${restartedStatus}`);
  const other = outcomes.filter((o) => o.status !== null && o.status !== 200);
  if (other.length > 0) problems.push(`responses other than 200 before the kill: ${JSON.stringify(tally(other))}`);
  return {
    counts: tally(outcomes),
    ok: ok.length,
    missingRows: missing.length,
    rowsWithout200: [...ids].filter((id) => !answered.has(id)).length,
    integrity,
    restartedStatus,
    problems,
  };
}

export interface TermResult {
  counts: Record<string, number>;
  /** Requests started well before SIGTERM (in flight when it came), and how many of them got 200. */
  inFlight: number;
  inFlightOk: number;
  after: Record<string, number>;
  exitCode: number | null;
  exitMs: number;
  problems: string[];
}

/**
 * SIGTERM in the middle of load: requests already in flight finish with 200; later ones get 503
 * shutting_down or a refused/closed connection; the process exits 0 within `maxExitMs`.
 */
export async function termMidLoad(opts: { concurrency: number; loadMs: number; maxExitMs: number }): Promise<TermResult> {
  const svc = await startService({ env: LOAD_ENV });
  let exited = false;
  const load = hammer(svc, { concurrency: opts.concurrency, stop: () => exited });
  await sleep(opts.loadMs);
  const termAt = performance.now();
  const exit = svc.stop("SIGTERM");
  const timeout = sleep(opts.maxExitMs + 5000).then(() => "timeout" as const);
  const code = await Promise.race([exit, timeout]);
  const exitMs = performance.now() - termAt;
  exited = true;
  if (code === "timeout") svc.proc.kill("SIGKILL");
  const outcomes = await load;
  // A request sent a few ms before the signal may still be on its way in; 20 ms is ample on loopback.
  const inFlight = outcomes.filter((o) => o.startedAt < termAt - 20 && o.startedAt + o.ms > termAt);
  const later = outcomes.filter((o) => o.startedAt >= termAt);
  const problems: string[] = [];
  const notOk = inFlight.filter((o) => o.status !== 200);
  if (notOk.length > 0) problems.push(`${notOk.length} of ${inFlight.length} in-flight requests did not get 200: ${JSON.stringify(tally(notOk))}`);
  const badLater = outcomes.filter(
    (o) => o.status !== null && o.status !== 200 && !(o.status === 503 && o.errorType === "service_unavailable_error"),
  );
  if (badLater.length > 0) problems.push(`unexpected answers: ${JSON.stringify(tally(badLater))}`);
  // Once the server has had time to see the signal, nothing new is served.
  const servedLate = later.filter((o) => o.startedAt > termAt + 200 && o.status === 200);
  if (servedLate.length > 0) problems.push(`${servedLate.length} requests sent more than 200 ms after SIGTERM got 200`);
  if (code !== 0) problems.push(`exit code ${code}`);
  if (exitMs > opts.maxExitMs) problems.push(`exit took ${Math.round(exitMs)} ms (bound ${opts.maxExitMs} ms)`);
  return {
    counts: tally(outcomes),
    inFlight: inFlight.length,
    inFlightOk: inFlight.length - notOk.length,
    after: tally(later),
    exitCode: code === "timeout" ? null : code,
    exitMs,
    problems,
  };
}

export interface LimitResult {
  limit: number;
  sent: number;
  ok: number;
  refused: number;
  usageRows: number;
  problems: string[];
}

/** A key with its own per-minute limit N and N+k concurrent requests: exactly N pass, k get 429. */
export async function limitBurst(opts: { limit: number; extra: number }): Promise<LimitResult> {
  const svc = await startService({ env: LOAD_ENV });
  try {
    const created = await cli(["keys", "create", "--name", "burst", "--per-minute", String(opts.limit)], { SVC_DATA_DIR: svc.dataDir });
    if (created.code !== 0) throw new Error(`keys create failed: ${created.stderr}`);
    const lines = created.stdout.trim().split("\n");
    const key = lines[lines.length - 1];
    await awayFromMinuteEdge();
    const agent = new Agent({ keepAlive: true, maxSockets: opts.limit + opts.extra });
    const sent = opts.limit + opts.extra;
    const outcomes = await Promise.all(Array.from({ length: sent }, (_, i) => send(svc.url, "/v1/systemone", key, loadBody(i), agent)));
    agent.destroy();
    const ok = outcomes.filter((o) => o.status === 200).length;
    const refused = outcomes.filter((o) => o.status === 429 && o.errorType === "rate_limit_error" && o.errorLimit === "key_limit").length;
    const db = openDb(svc.dataDir);
    const usageRows = (db.prepare("SELECT COUNT(*) FROM usage u JOIN keys k ON k.id = u.key_id WHERE k.prefix = ?").pluck().get(key.slice(4, 12)) as number);
    db.close();
    const problems: string[] = [];
    if (ok !== opts.limit || refused !== opts.extra) {
      problems.push(`limit ${opts.limit}, ${sent} concurrent: ${ok} got 200 and ${refused} got 429 key_limit (${JSON.stringify(tally(outcomes))})`);
    }
    if (usageRows !== ok) problems.push(`${ok} responses 200 but ${usageRows} usage rows for the key`);
    return { limit: opts.limit, sent, ok, refused, usageRows, problems };
  } finally {
    await svc.stop();
  }
}
