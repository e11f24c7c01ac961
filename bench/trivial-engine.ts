import type { Calibration, Engine, ModelInfo, Plan, PlanSteps, RawScores } from "../src/engine/engine.js";
import type { Question } from "../src/questions/question.js";

/** A token estimate from length alone (4 characters a token): tokenizing is the model's cost (bench:model). */
function tokens(text: string | null): number {
  return text === null ? 0 : Math.ceil(text.length / 4);
}

/**
 * An engine that does no inference: tokens are estimated from lengths and every raw score is 0.
 * It lets the benches measure everything around the model (HTTP, auth, limits, validation, usage
 * record, serialization) without the model's cost.
 */
export class TrivialEngine implements Engine {
  readonly info: ModelInfo = { backend: "trivial", description: "no inference (bench)", languages: ["en"], maxPairTokens: 256, hash: "000000000000" };
  readonly calibration: Calibration = {
    choice: { temperature: 1 },
    score: { temperature: 1 },
    noul: { a: 1, b: 0 },
    default_min_confidence: 0.2,
  };

  async load(): Promise<void> {}
  async close(): Promise<void> {}

  // One step: nothing to spread.
  *planSteps(state: string, questions: Question[]): PlanSteps {
    return this.plan(state, questions);
  }

  plan(state: string, questions: Question[]): Plan {
    const stateTokens = tokens(state);
    const plans = questions.map((q) => {
      const base = stateTokens + tokens(q.text);
      const pairTokens =
        q.kind === "noul" ? [base + tokens(q.yes) + tokens(q.no)] : q.options.map((o) => base + tokens(o.key) + tokens(o.description));
      return { question: q, pairTokens, stateCut: false };
    });
    const inputTokens = plans.reduce((s, p) => s + p.pairTokens.reduce((a, b) => a + b, 0), 0);
    return { questions: plans, inputTokens, work: null };
  }

  async run(plan: Plan): Promise<RawScores> {
    return plan.questions.map((qp) => (qp.question.kind === "noul" ? [0] : qp.question.options.map(() => 0)));
  }
}
