/**
 * Load and faults against a real `svc serve` child process with the real model (the long form of
 * test/load.test.ts): sustained load with RSS over time, SIGKILL mid-load and restart, SIGTERM
 * mid-load, and a key's own per-minute limit under concurrency. Exits 1 when a property fails.
 *
 *   npm run bench:load [-- --duration 120 --concurrency 32 --warmup 60 --variety 0 --margin 0.15 --fault-after 5]
 * (--variety 0: every state is new, so every request runs the model; N: states cycle through N texts)
 */
import { killMidLoad, limitBurst, sustained, termMidLoad } from "../test/helpers/load.js";
import { header, machine, numberFlag, printTable, round, writeResult } from "./lib.js";

async function main(): Promise<void> {
  const m = machine();
  header("bench:load: sustained load and faults on a real svc serve", m);
  const durationMs = numberFlag("duration", 120) * 1000;
  const concurrency = numberFlag("concurrency", 32);
  const warmupMs = numberFlag("warmup", 60) * 1000;
  const variety = numberFlag("variety", 0);
  const rssMargin = numberFlag("margin", 0.15);
  const faultMs = numberFlag("fault-after", 5) * 1000;

  const rss: { s: number; mb: number }[] = [];
  const s = await sustained({ concurrency, warmupMs, durationMs, rssMargin, variety, onSample: (ms, kb) => rss.push({ s: round(ms / 1000, 0), mb: round(kb / 1024, 1) }) });
  console.log(`sustained: ${concurrency} clients, ${warmupMs / 1000} s warm-up + ${durationMs / 1000} s, variety ${variety || "all new"}`);
  printTable([
    {
      "200": s.ok,
      "usage rows": s.usageRows,
      "req/s": round(s.requestsPerSecond, 1),
      "p50 ms": round(s.latencyP50Ms, 0),
      "p99 ms": round(s.latencyP99Ms, 0),
      "RSS warm MiB": round(s.rssAfterWarmupKb / 1024, 1),
      "RSS end MiB": round(s.rssAtEndKb / 1024, 1),
      growth: `${round(s.rssGrowth * 100, 1)}%`,
    },
  ]);
  console.log(`RSS every 5 s (MiB): ${rss.map((r) => r.mb).join(" ")}\n`);

  const k = await killMidLoad({ concurrency, loadMs: faultMs });
  const t = await termMidLoad({ concurrency, loadMs: faultMs, maxExitMs: 12_000 });
  const l = await limitBurst({ limit: 20, extra: 15 });
  printTable([
    { scenario: "SIGKILL + restart", result: `${k.ok} x 200, ${k.missingRows} without a row, ${k.rowsWithout200} rows never answered, integrity ${k.integrity}, restart ${k.restartedStatus}` },
    { scenario: "SIGTERM", result: `${t.inFlightOk}/${t.inFlight} in flight got 200, after: ${JSON.stringify(t.after)}, exit ${t.exitCode} in ${round(t.exitMs, 0)} ms` },
    { scenario: "key limit 20, 35 concurrent", result: `${l.ok} x 200, ${l.refused} x 429 key_limit, ${l.usageRows} usage rows` },
  ]);
  const problems = [...s.problems, ...k.problems, ...t.problems, ...l.problems];
  console.log(problems.length === 0 ? "\nall properties hold" : `\nPROBLEMS:\n- ${problems.join("\n- ")}`);
  writeResult("load", m, { sustained: { ...s, rssSeries: rss }, sigkill: k, sigterm: t, limit: l, problems });
  if (problems.length > 0) process.exitCode = 1;
}

await main();
