/**
 * Latency of the two encoders of the built-in engine (teacher: Universal Sentence Encoder lite in
 * wasm workers; student: the multilingual int8 table), called directly (plan + run): one choice
 * question with 4 described options and a ~60-token state, every request with texts never seen
 * before (cold: nothing cached), measured in one run so the ratio is comparable.
 *
 *   npm run build && node dist/bench/multilingual-latency.js [--reps 40]
 */
import { BuiltinEngine } from "../src/engine/builtin/builtin-engine.js";
import type { Question } from "../src/questions/question.js";

const at = process.argv.indexOf("--reps");
const reps = at > 0 ? Number(process.argv[at + 1]) : 40;
let counter = 0;

function request(): { state: string; q: Question } {
  const n = `${Date.now().toString(36)}${(counter++).toString(36)}`;
  const state =
    `Ticket ${n}: hello, I ordered a pair of running shoes two weeks ago and the tracking page still says the parcel is waiting ` +
    `at the depot. I was charged already and nobody answers my emails. Can you tell me when it will arrive or refund me?`;
  const q: Question = {
    key: "topic",
    kind: "choice",
    text: `What is ticket ${n} about?`,
    options: [
      { key: "billing", description: `Payments, invoices, charges and refunds (${n})` },
      { key: "technical", description: `Bugs, errors, app or website not working (${n})` },
      { key: "account", description: `Login, password, profile or account settings (${n})` },
      { key: "shipping", description: `Delivery of physical orders (${n})` },
    ],
    yes: null,
    no: null,
  };
  return { state, q };
}

async function measure(encoder: "teacher" | "student"): Promise<{ p50: number; p90: number; stateTokens: number }> {
  const engine = new BuiltinEngine({ encoder });
  await engine.load();
  try {
    const times: number[] = [];
    let stateTokens = 0;
    for (let i = 0; i < reps + 3; i++) {
      const { state, q } = request();
      const t0 = performance.now();
      const plan = engine.plan(state, [q]);
      await engine.run(plan);
      if (i >= 3) times.push(performance.now() - t0);
      stateTokens = (plan.work as { pairs: { state: Int32Array }[][] }).pairs[0][0].state.length;
    }
    times.sort((a, b) => a - b);
    return { p50: times[Math.floor(times.length / 2)], p90: times[Math.floor(times.length * 0.9)], stateTokens };
  } finally {
    await engine.close();
  }
}

const teacher = await measure("teacher");
const student = await measure("student");
console.log(`4-option choice, ${teacher.stateTokens}-token state, ${reps} cold requests each`);
console.log(`teacher p50 ${teacher.p50.toFixed(1)} ms  p90 ${teacher.p90.toFixed(1)} ms`);
console.log(`student p50 ${student.p50.toFixed(2)} ms  p90 ${student.p90.toFixed(2)} ms  (${(teacher.p50 / student.p50).toFixed(0)}x faster)`);
