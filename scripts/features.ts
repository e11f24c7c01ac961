/** What the built-in model's tuning and calibration scripts share: flags and the features of a labeled set. */
import { BuiltinEngine, type QuestionFeatures } from "../src/engine/builtin/builtin-engine.js";
import { labelIndex, toQuestion, type DevItem } from "../src/eval/dataset.js";
import { splitOf, type Split } from "../src/eval/split.js";
import { renderText } from "../src/questions/render.js";

export interface Scored {
  item: DevItem;
  split: Split;
  label: number;
  features: QuestionFeatures;
}

export function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

/** The raw features of every item (neutral-state features too when asked), then the engine is closed. */
export async function scoreFeatures(engine: BuiltinEngine, items: DevItem[], neutral = false): Promise<Scored[]> {
  await engine.load();
  try {
    return await Promise.all(
      items.map(async (item): Promise<Scored> => {
        const q = toQuestion(item);
        const plan = engine.plan(renderText(item.state), [q]);
        const [features] = await engine.features(plan, neutral);
        return { item, split: splitOf(item.group), label: labelIndex(item, q), features };
      }),
    );
  } finally {
    await engine.close();
  }
}
