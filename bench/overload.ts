/**
 * Overload from one key against a real `svc serve` child: for each N of --sizes, key A sends N
 * concurrent maximal requests (64 choice questions x 192 options, 12,288 pairs, ~64 KB each) while
 * key B sends small requests one after the other and a prober asks GET /healthz every 20 ms. It
 * records what A got (answers, refusals by kind, timeouts, failed connections), how long B and
 * /healthz waited, the server's memory, and whether the server died (it is then started again).
 *
 *   npm run bench:overload [-- --sizes 1,20,200 --timeout 60 --settle 20]
 * (--timeout: client timeout of every request, s; --settle: how long to wait for the server to go
 *  idle between phases before it is replaced by a fresh one, s)
 */
import { rmSync } from "node:fs";
import { cli, startService, type Service } from "../test/helpers/service.js";
import { LOAD_ENV } from "../test/helpers/load.js";
import {
  cpuSeconds,
  fire,
  healthProbe,
  maximalRequest,
  outcomeKey,
  rssSampler,
  smallRequest,
  summarize,
  tally,
  type Fired,
  type LatencySummary,
  type RssSummary,
} from "../test/helpers/pressure.js";
import { header, machine, numberFlag, printTable, round, sleep, writeResult } from "./lib.js";

const PATH = "/v1/systemone";
/** Key B's next request; counted across phases, so that no state repeats and hits the cache. */
let smallSeed = 0;

/** `--sizes 1,20,200` (or `--sizes=...`). */
function sizesFlag(fallback: number[], argv = process.argv.slice(2)): number[] {
  const at = argv.findIndex((a) => a === "--sizes" || a.startsWith("--sizes="));
  if (at < 0) return fallback;
  const raw = argv[at].includes("=") ? argv[at].slice("--sizes=".length) : (argv[at + 1] ?? "");
  const sizes = raw.split(",").map(Number);
  if (sizes.length === 0 || !sizes.every((n) => Number.isInteger(n) && n > 0)) throw new Error(`--sizes needs positive integers, got ${raw}`);
  return sizes;
}

interface Died {
  code: number | null;
  signal: string | null;
  afterMs: number;
  /** The last lines the server wrote (say, "JavaScript heap out of memory"). */
  lastOutput: string;
}

interface Phase {
  n: number;
  wallMs: number;
  a: {
    outcomes: Record<string, number>;
    answered: number;
    /** 429 with error.limit "concurrency": the key's share of the server is taken. */
    refusedConcurrency: number;
    refused503: number;
    timedOut: number;
    failed: number;
    answeredMs: LatencySummary;
    refusedMs: LatencySummary;
    /** Refusals (429/503) that came without a Retry-After header. */
    refusedWithoutRetryAfter: number;
  };
  /** openAtEndMs: how long B's request still open when A's last one ended had waited (0: none open). */
  b: LatencySummary & { outcomes: Record<string, number>; openAtEndMs: number };
  healthz: LatencySummary;
  rss: RssSummary & { hwmDeltaMb: number };
  died: Died | null;
  /** After the phase: how long until the server was idle, or that it was replaced when it was not. */
  settle: { ms: number; replaced: boolean };
}

async function kill(svc: Service): Promise<void> {
  // stop() would wait forever for a process a signal already ended (its exitCode stays null).
  if (svc.proc.signalCode !== null) return;
  // Under overload a graceful stop can take as long as the work queued; the data is not needed.
  await svc.stop("SIGKILL");
}

/** Waits until /healthz answers and the server uses under 5% of a core; false when `limitMs` ran out. */
async function settle(svc: Service, limitMs: number): Promise<boolean> {
  const until = performance.now() + limitMs;
  while (performance.now() < until) {
    const before = cpuSeconds(svc.proc.pid!);
    const health = await fire(`${svc.url}/healthz`, null, null, { timeoutMs: 1000 });
    await sleep(500);
    const after = cpuSeconds(svc.proc.pid!);
    if (before === null || after === null) return false;
    if (health.status === 200 && after - before < 0.05 * 0.5 + 0.01) return true;
  }
  return false;
}

async function phase(svc: Service, keyB: string, n: number, timeoutMs: number, seedBase: number): Promise<Phase> {
  const url = `${svc.url}${PATH}`;
  // Serialized up front, so that the client's own work does not spread the burst out.
  const bodies = Array.from({ length: n }, (_, i) => JSON.stringify(maximalRequest(seedBase + i)));
  let died: Died | null = null;
  const t0 = performance.now();
  let markExited = (): void => {};
  const exited = new Promise<void>((resolve) => (markExited = resolve));
  const onExit = (code: number | null, signal: string | null): void => {
    died = { code, signal, afterMs: round(performance.now() - t0, 0), lastOutput: svc.output().trim().split("\n").slice(-5).join("\n") };
    markExited();
  };
  svc.proc.once("exit", onExit);
  const rss = rssSampler(svc.proc.pid!, 100);
  const health = healthProbe(svc.url, 20);

  const endB = new AbortController();
  const bOutcomes: Fired[] = [];
  let bOpenMs = 0;
  const loopB = (async () => {
    while (!endB.signal.aborted) {
      const r = await fire(url, keyB, smallRequest(smallSeed++), { timeoutMs, signal: endB.signal });
      if (r.error === "aborted") bOpenMs = r.ms;
      else bOutcomes.push(r);
      if (r.status === null && !endB.signal.aborted) await sleep(100); // the server may be gone
    }
  })();

  const a = await Promise.all(bodies.map((body) => fire(url, svc.key, body, { timeoutMs })));
  const wallMs = performance.now() - t0;
  // A killed server's sockets close before its exit is reported: give the report a moment.
  if (a.some((o) => o.status === null && o.error !== "timeout")) await Promise.race([exited, sleep(2000)]);
  endB.abort();
  await loopB;
  const healthz = health.stop();
  const mem = rss.stop();
  svc.proc.off("exit", onExit);

  const refused = a.filter((o) => o.status === 429 || o.status === 503);
  const bOk = bOutcomes.filter((o) => o.status === 200).map((o) => o.ms);
  return {
    n,
    wallMs: round(wallMs, 0),
    a: {
      outcomes: tally(a),
      answered: a.filter((o) => o.status === 200).length,
      refusedConcurrency: a.filter((o) => outcomeKey(o) === "429 concurrency").length,
      refused503: a.filter((o) => o.status === 503).length,
      timedOut: a.filter((o) => o.error === "timeout").length,
      failed: a.filter((o) => o.status === null && o.error !== "timeout").length,
      answeredMs: summarize(a.filter((o) => o.status === 200).map((o) => o.ms)),
      refusedMs: summarize(refused.map((o) => o.ms)),
      refusedWithoutRetryAfter: refused.filter((o) => !("retry-after" in o.headers)).length,
    },
    b: { ...summarize(bOk, bOutcomes.length - bOk.length), outcomes: tally(bOutcomes), openAtEndMs: round(bOpenMs, 0) },
    healthz,
    rss: { ...mem, hwmDeltaMb: round(mem.hwmEndMb - mem.hwmStartMb, 1) },
    died,
    settle: { ms: 0, replaced: false },
  };
}

const ms = (x: number): string => (Number.isFinite(x) ? String(round(x, 0)) : "-");
const trio = (s: LatencySummary): string => `${ms(s.p50)} / ${ms(s.p99)} / ${ms(s.max)}`;
const others = (outcomes: Record<string, number>, shown: (k: string) => boolean): string =>
  Object.entries(outcomes)
    .filter(([k]) => !shown(k))
    .map(([k, v]) => `${v} ${k}`)
    .join(", ") || "-";

function report(phases: Phase[]): void {
  printTable(
    phases.map((p) => ({
      N: p.n,
      "A 200": p.a.answered,
      "A 429 concurrency": p.a.refusedConcurrency,
      "A 503": p.a.refused503,
      "A timeout": p.a.timedOut,
      "A other": others(p.a.outcomes, (k) => k === "200" || k === "429 concurrency" || k.startsWith("503") || k === "timeout"),
      "A 200 p50/p99 ms": `${ms(p.a.answeredMs.p50)} / ${ms(p.a.answeredMs.p99)}`,
      "refusal p50/p99 ms": `${ms(p.a.refusedMs.p50)} / ${ms(p.a.refusedMs.p99)}`,
      "wall s": round(p.wallMs / 1000, 1),
      "server died": p.died ? `${p.died.signal ?? `exit ${p.died.code}`} at ${round(p.died.afterMs / 1000, 1)} s` : "no",
    })),
  );
  console.log("");
  printTable(
    phases.map((p) => ({
      N: p.n,
      "B 200": p.b.count,
      "B p50/p99/max ms": trio(p.b),
      "B open at end ms": p.b.openAtEndMs,
      "B other": others(p.b.outcomes, (k) => k === "200"),
      "/healthz n": p.healthz.count,
      "/healthz p50/p99/max ms": trio(p.healthz),
      "peak RSS MiB": round(p.rss.peakRssMb, 0),
      "HWM delta MiB": round(p.rss.hwmDeltaMb, 0),
      settled: p.settle.replaced ? "replaced" : `${round(p.settle.ms / 1000, 1)} s`,
    })),
  );
  for (const p of phases) if (p.died) console.log(`\nN=${p.n}: the server died (${p.died.signal ?? p.died.code}); its last lines:\n${p.died.lastOutput}`);
}

async function main(): Promise<void> {
  const m = machine();
  header("bench:overload: one key's maximal requests against another key's small ones", m);
  const sizes = sizesFlag([1, 20, 200]);
  const timeoutMs = numberFlag("timeout", 60) * 1000;
  const settleMs = numberFlag("settle", 20) * 1000;

  let svc = await startService({ env: LOAD_ENV });
  const start = (): Promise<Service> => startService({ env: LOAD_ENV, dataDir: svc.dataDir, key: svc.key });
  const stopOnSignal = (): void => {
    svc.proc.kill("SIGKILL");
    process.exit(130);
  };
  process.once("SIGINT", stopOnSignal).once("SIGTERM", stopOnSignal);
  const phases: Phase[] = [];
  try {
    const created = await cli(["keys", "create", "--name", "b", "--per-minute", "0"], { SVC_DATA_DIR: svc.dataDir });
    if (created.code !== 0) throw new Error(`keys create failed: ${created.stderr}`);
    const keyB = created.stdout.trim().split("\n").at(-1)!;
    await fire(`${svc.url}${PATH}`, keyB, smallRequest(smallSeed++), { timeoutMs }); // the first request pays for warm-up
    let seedBase = 1;
    for (const n of sizes) {
      console.log(`N=${n}: ${n} maximal requests from key A, small ones from key B, /healthz every 20 ms (timeout ${timeoutMs / 1000} s)`);
      const p = await phase(svc, keyB, n, timeoutMs, seedBase);
      seedBase += n;
      const t = performance.now();
      const idle = p.died === null && (await settle(svc, settleMs));
      if (!idle) {
        // Dead, or still busy with work whose clients are gone: the next phase gets a fresh server.
        await kill(svc);
        svc = await start();
      }
      p.settle = { ms: round(performance.now() - t, 0), replaced: !idle };
      phases.push(p);
      await sleep(1000);
    }
  } finally {
    await kill(svc);
    rmSync(svc.dataDir, { recursive: true, force: true });
  }
  console.log("");
  report(phases);
  writeResult("overload", m, { sizes, timeoutS: timeoutMs / 1000, settleS: settleMs / 1000, env: LOAD_ENV, request: { questions: 64, options: 192, pairs: 64 * 192 }, phases });
}

await main();
