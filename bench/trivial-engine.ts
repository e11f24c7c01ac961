import type { Calibration, Engine, ModelInfo, Plan, RawScores } from "../src/engine/engine.js";
import type { Question } from "../src/questions/question.js";

/** Whitespace-separated words: the bench's stand-in for tokens. */
function words(text: string | null): number {
  if (text === null) return 0;
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 32 || (c >= 9 && c <= 13);
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

/**
 * An engine that does no inference: tokens are whitespace-separated words and every raw score is 0.
 * It lets the benches measure everything around the model (HTTP, auth, limits, validation, usage
 * record, serialization) without the model's cost.
 */
export class TrivialEngine implements Engine {
  readonly info: ModelInfo = { backend: "trivial", description: "no inference (bench)", languages: ["en"], maxPairTokens: 256 };
  readonly calibration: Calibration = {
    choice: { temperature: 1 },
    score: { temperature: 1 },
    noul: { a: 1, b: 0 },
    default_min_confidence: 0.2,
  };

  async load(): Promise<void> {}
  async close(): Promise<void> {}

  plan(state: string, questions: Question[]): Plan {
    const stateTokens = words(state);
    const plans = questions.map((q) => {
      const base = stateTokens + words(q.text);
      const pairTokens =
        q.kind === "noul" ? [base + words(q.yes) + words(q.no)] : q.options.map((o) => base + words(o.key) + words(o.description));
      return { question: q, pairTokens };
    });
    const inputTokens = plans.reduce((s, p) => s + p.pairTokens.reduce((a, b) => a + b, 0), 0);
    return { questions: plans, inputTokens, work: null };
  }

  async run(plan: Plan): Promise<RawScores> {
    return plan.questions.map((qp) => (qp.question.kind === "noul" ? [0] : qp.question.options.map(() => 0)));
  }
}
