/**
 * Two builds of the built-in model path, A/B in one process: the engine of an earlier checkout (--baseline DIR,
 * built, with its node_modules) and this build's, both loaded, requests alternated between them (which goes first
 * alternating too), so both see the machine in the same state. Every request's texts are new (lib.ts choiceBody).
 * Prints the p50 of each and their ratio per shape.
 *
 *   npm run bench:model-ab -- --baseline DIR [--reps 30]
 */
import { resolve, join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseSystemOne } from "../src/api/systemone.js";
import { createEngine } from "../src/engine/registry.js";
import type { Engine } from "../src/engine/engine.js";
import { choiceBody, header, machine, numberFlag, percentile, printTable, round, writeResult } from "./lib.js";

let counter = 0;
const fresh = (): string => `${Date.now().toString(36)}${(counter++).toString(36)}`;

async function timed(engine: Engine, body: ReturnType<typeof choiceBody>): Promise<number> {
  const t0 = performance.now();
  const req = parseSystemOne(body);
  await engine.run(engine.plan(req.state, req.questions));
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const m = machine();
  header("bench:model-ab: an earlier build's engine against this build's, requests alternated in one process", m);
  const at = process.argv.indexOf("--baseline");
  if (at < 0) throw new Error("--baseline DIR (a built checkout) is required");
  const dir = resolve(process.argv[at + 1]);
  const reps = numberFlag("reps", 30);
  const theirs = (await import(pathToFileURL(join(dir, "dist", "src", "engine", "registry.js")).href)) as { createEngine: typeof createEngine };
  const before = theirs.createEngine({ workers: 0 });
  const after = createEngine({ workers: 0 });
  await before.load();
  await after.load();
  const rows = [];
  for (const [questions, options] of [[1, 2], [1, 4], [1, 10], [4, 4], [1, 50], [1, 255]]) {
    const n = Math.max(8, Math.min(reps, Math.floor(200 / (questions * options))));
    const a: number[] = [];
    const b: number[] = [];
    for (let i = -3; i < n; i++) {
      const [x, y] = [choiceBody(fresh(), questions, options), choiceBody(fresh(), questions, options)];
      const [ta, tb] = i % 2 === 0 ? [await timed(before, x), await timed(after, y)] : [await timed(after, y), await timed(before, x)].reverse();
      if (i < 0) continue; // warm-up
      a.push(ta);
      b.push(tb);
    }
    const pa = percentile(a, 50);
    const pb = percentile(b, 50);
    rows.push({ shape: `${questions} × ${options}`, requests: n, baselineP50Ms: round(pa), thisP50Ms: round(pb), ratio: round(pb / pa, 3) });
  }
  await before.close();
  await after.close();
  console.log(`baseline: ${dir}`);
  printTable(rows.map((r) => ({ shape: r.shape, n: r.requests, "baseline p50 ms": r.baselineP50Ms, "this p50 ms": r.thisP50Ms, ratio: r.ratio })));
  writeResult("model-ab", m, { rows });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
