import { DeciderEngine } from "../engine/decider/decider-engine.js";
import type { Engine } from "../engine/engine.js";
import { createEngine } from "../engine/registry.js";
import type { Config } from "../config.js";
import { toQuestion } from "../eval/dataset.js";
import { accuracy, ece, judge, scoreItems } from "../eval/metrics.js";
import { publicSets, type PublicSet } from "../eval/public.js";
import { renderText } from "../questions/render.js";
import { flagInt, type Args } from "./args.js";

interface Column {
  name: string;
  engine: Engine;
}

/** Accuracy with plain cosine similarity of the state and each option (e5's own sentence vectors, no scorer): the floor for zero-shot choice. */
async function cosineAccuracy(set: PublicSet, workers: number): Promise<number> {
  const engine = new DeciderEngine(undefined, { threads: workers });
  await engine.load();
  try {
    let right = 0;
    for (const item of set.items) {
      const q = toQuestion(item);
      const [state, ...options] = await engine.embed([renderText(item.state), ...q.options.map((o) => o.key.replace(/_/g, " "))]);
      const sims = options.map((o) => o.reduce((s, v, i) => s + v * state[i], 0));
      const best = sims.reduce((b, v, i) => (v > sims[b] ? i : b), 0);
      if (q.options[best].key === item.label) right++;
    }
    return right / set.items.length;
  } finally {
    await engine.close();
  }
}

/** The share of the set's most common label: what answering it every time would score (the floor a model must beat). */
function majorityShare(set: PublicSet): number {
  const counts = new Map<string, number>();
  for (const item of set.items) counts.set(String(item.label), (counts.get(String(item.label)) ?? 0) + 1);
  return Math.max(...counts.values()) / set.items.length;
}

/**
 * `svc eval --public DATA`: accuracy and ECE on public sets never trained on (src/eval/public.ts),
 * for the model in use, the share of each set's most common answer (what always giving it scores),
 * and plain cosine of e5's sentence vectors on the zero-shot intents.
 */
export async function evalPublic(config: Config, args: Args, dir: string): Promise<number> {
  const sets = publicSets(dir, { perSet: flagInt(args, "per-set") ?? undefined, perIntent: flagInt(args, "per-intent") ?? undefined });
  const main = createEngine({ workers: config.workers, dataDir: config.dataDir });
  const columns: Column[] = [{ name: main.info.backend, engine: main }];
  const results: Record<string, Record<string, { n: number; accuracy: number; ece: number }>> = {};
  try {
    for (const c of columns) await c.engine.load();
    for (const set of sets) {
      results[set.name] = {};
      for (const c of columns) {
        const judged = (await scoreItems(c.engine, set.items)).map((s) => judge(s, c.engine.calibration));
        results[set.name][c.name] = { n: judged.length, accuracy: accuracy(judged), ece: ece(judged) };
      }
      results[set.name]["always the most common answer"] = { n: set.items.length, accuracy: majorityShare(set), ece: Number.NaN };
      if (set.name.startsWith("Held-out intents")) {
        const acc = await cosineAccuracy(set, config.workers || 2);
        results[set.name]["plain cosine"] = { n: set.items.length, accuracy: acc, ece: Number.NaN };
      }
    }
  } finally {
    await Promise.all(columns.map((c) => c.engine.close()));
  }
  if (args.flags.has("json")) {
    process.stdout.write(`${JSON.stringify({ dir, sets: results }, null, 2)}\n`);
    return 0;
  }
  const out = [`public benchmarks from ${dir} (sets never used to train or fit the built-in model)`, ""];
  for (const [name, cols] of Object.entries(results)) {
    out.push(name);
    for (const [col, r] of Object.entries(cols)) {
      const e = Number.isNaN(r.ece) ? "" : `  ECE ${r.ece.toFixed(3)}`;
      out.push(`  ${col.padEnd(40)} ${(100 * r.accuracy).toFixed(1).padStart(5)}% (n=${r.n})${e}`);
    }
  }
  process.stdout.write(`${out.join("\n")}\n`);
  return 0;
}
