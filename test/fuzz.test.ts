import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { post, startService, type Service } from "./helpers/service.js";
import { fuzzHttp, RAW_CASES } from "./helpers/fuzz.js";

const BODY_TIMEOUT_MS = 1500;
let svc: Service;
before(async () => {
  svc = await startService({ env: { SVC_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS), SVC_PER_MINUTE: "0" } });
});
after(async () => {
  await svc.stop();
});

async function stillUp(): Promise<void> {
  assert.equal(svc.proc.exitCode, null, `the server exited:\n${svc.output().slice(-2000)}`);
  assert.equal((await fetch(`${svc.url}/healthz`)).status, 200);
}

// Short form of bench/fuzz.ts (npm run bench:fuzz runs many more cases).
describe("hostile input", () => {
  // A new seed every run, printed in the test's name; SVC_FUZZ_SEED=<seed> replays a run.
  const seed = process.env.SVC_FUZZ_SEED ? Number(process.env.SVC_FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
  test(`1500 random and mutated requests: never 5xx, always the documented error shape and request ids (seed ${seed})`, async (t) => {
    const stats = await fuzzHttp(svc, 1500, seed).catch((err: Error) => {
      throw new Error(`fuzz seed ${seed} (replay: SVC_FUZZ_SEED=${seed} node --test dist/test/fuzz.test.js)\n${err.message}`);
    });
    t.diagnostic(JSON.stringify(stats));
    await stillUp();
    assert.doesNotMatch(svc.output(), /\] (RangeError|TypeError|Error)/, "the server logged an internal error");
  });

  for (const c of RAW_CASES) {
    test(`raw socket: ${c.name}`, async () => {
      assert.deepEqual(await c.run(svc, BODY_TIMEOUT_MS), []);
      await stillUp();
    });
  }

  // Found by the fuzzer: 10,000 nested arrays overflowed the renderer's stack (500), and shallower
  // nesting made rendered text quadratic in the depth.
  test("deeply nested state, instructions or descriptions are 422 too_deep, 64 levels are fine", async () => {
    // Written by hand: JSON.stringify itself is recursive and cannot write 10,000 levels.
    const nest = (depth: number, open = "[", close = "]") => open.repeat(depth) + "1" + close.repeat(depth);
    const body = (state: string, question: string) => Buffer.from(`{"model":"svc-latest","state":${state},"questions":{"q":${question}}}`);
    const deep = nest(10_000);
    for (const [bytes, loc] of [
      [body(deep, '{"type":"noul","instructions":"x"}'), ["body", "state"]],
      [body('"x"', `{"type":"noul","instructions":${nest(10_000, '{"a":', "}")}}`), ["body", "questions", "q", "instructions"]],
      [body('"x"', `{"type":"choice","criteria":{"a":${deep},"b":null}}`), ["body", "questions", "q", "criteria", "a"]],
      [body('"x"', `{"type":"noul","instructions":"x","criteria":{"true":${nest(65)}}}`), ["body", "questions", "q", "criteria", "true"]],
    ] as const) {
      const r = await post(svc, "/v1/systemone", bytes);
      assert.equal(r.status, 422, JSON.stringify(loc));
      assert.deepEqual(r.body.detail, [{ loc, msg: "Objects and arrays may be nested at most 64 levels deep here.", type: "too_deep" }]);
    }
    const decide = Buffer.from(`{"model":"svc-latest","state":${deep},"questions":{"q":{"type":"binary","question":"x"}}}`);
    const es = await post(svc, "/v1/decide", decide, { "accept-language": "es" });
    assert.equal(es.status, 422);
    assert.equal(es.body.error.message, "state: Los objetos y arrays pueden anidarse como máximo 64 niveles aquí.");
    const ok = await post(svc, "/v1/systemone", body(nest(64), `{"type":"noul","instructions":${nest(64)}}`));
    assert.equal(ok.status, 200);
    await stillUp();
  });
});
