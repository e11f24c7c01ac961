/**
 * Hostile input at length (the long form of test/fuzz.test.ts): many fast-check cases against a real
 * `svc serve`, then the raw-socket cases. Exits 1 (with fast-check's counterexample and seed) when a
 * property fails.
 *
 *   npm run bench:fuzz [-- --runs 20000 --seed 42]
 */
import { startService } from "../test/helpers/service.js";
import { fuzzHttp, RAW_CASES } from "../test/helpers/fuzz.js";
import { header, machine, numberFlag, printTable, round, writeResult } from "./lib.js";

const BODY_TIMEOUT_MS = 1500;

async function main(): Promise<void> {
  const m = machine();
  header("bench:fuzz: hostile input against a real svc serve", m);
  const runs = numberFlag("runs", 20_000);
  const seed = process.argv.some((a) => a.startsWith("--seed")) ? numberFlag("seed", 0) : Date.now() % 2 ** 31;
  const svc = await startService({ env: { SVC_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS), SVC_PER_MINUTE: "0" } });
  const problems: string[] = [];
  try {
    console.log(`seed ${seed}, ${runs} cases`);
    const stats = await fuzzHttp(svc, runs, seed).catch((err: Error) => {
      problems.push(err.message);
      return null;
    });
    if (stats) {
      printTable(Object.entries(stats.statuses).map(([status, n]) => ({ status, answers: n })));
      console.log(`\n${stats.runs} cases in ${round(stats.ms / 1000, 1)} s; kinds: ${JSON.stringify(stats.kinds)}\n`);
    }
    const raw = [];
    for (const c of RAW_CASES) {
      const found = await c.run(svc, BODY_TIMEOUT_MS);
      raw.push({ case: c.name, result: found.length === 0 ? "ok" : found.join("; ") });
      problems.push(...found.map((p) => `${c.name}: ${p}`));
    }
    printTable(raw);
    const health = await fetch(`${svc.url}/healthz`).then((r) => r.status, () => null);
    if (svc.proc.exitCode !== null || health !== 200) problems.push(`server not healthy afterwards (exit ${svc.proc.exitCode}, /healthz ${health})`);
    if (/\] (RangeError|TypeError|Error)/.test(svc.output())) problems.push("the server logged an internal error");
    console.log(problems.length === 0 ? "\nall properties hold" : `\nPROBLEMS:\n- ${problems.join("\n- ")}`);
    writeResult("fuzz", m, { seed, runs, stats, raw, problems });
    if (problems.length > 0) process.exitCode = 1;
  } finally {
    await svc.stop();
  }
}

await main();
