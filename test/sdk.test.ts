import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  AuthenticationError,
  NotFoundError,
  RateLimitError,
  TypeSafeClient,
  UnprocessableEntityError,
  choice,
  noul,
  score,
} from "@typesafe-ai/sdk";
import { awayFromMinuteEdge, cli, startService, type Service } from "./helpers/service.js";

let svc: Service;
before(async () => {
  svc = await startService({ env: { SVC_PER_MINUTE: "1000" } });
  process.env.TYPESAFE_BASE_URL = svc.url;
  process.env.TYPESAFE_API_KEY = svc.key;
  delete process.env.TYPESAFE_DEFAULT_MODEL;
});
after(async () => {
  await svc.stop();
});

describe("the official TypeSafe client, configured only by its environment variables", () => {
  test("systemOne round trip with all question types, default model jev-latest", async () => {
    const client = new TypeSafeClient();
    const { data, requestId } = await client
      .systemOne({
        state: { document: "I was charged twice. Please fix this ASAP." },
        questions: {
          category: choice("What is this ticket about?", { billing: null, technical: null, other: null }),
          urgent: noul("Does the customer want a quick fix?"),
          mood: score("How upset is the customer?", ["calm", "annoyed", "angry"]),
        },
      })
      .withResponse();
    assert.match(requestId ?? "", /^req_[0-9a-f]{24}$/);
    assert.equal(data.model, "svc-1.6.0");
    assert.equal(data.usage.output_tokens, 0);
    assert.ok(data.usage.input_tokens > 0);
    assert.ok(["billing", "technical", "other"].includes(data.answers.category.choice));
    assert.equal(data.answers.category.choice, "billing");
    assert.equal(typeof data.answers.urgent.noul, "number");
    assert.deepEqual(data.answers.mood.legend, { "0": "calm", "1": "annoyed", "2": "angry" });
    const models = await client.models.list();
    assert.deepEqual(models.map((m: { name: string }) => m.name), ["svc-latest", "svc-preview", "svc-1.6.0"]);
  });

  test("typed errors: 401, 404, 422 and 429 with retryAfterMs", async () => {
    const bad = new TypeSafeClient({ apiKey: "svc_00000000_thisisnotarealkeyatall" });
    await assert.rejects(bad.systemOne({ state: "x", questions: { q: noul("?") } }), (e: unknown) => {
      assert.ok(e instanceof AuthenticationError);
      assert.equal(e.status, 401);
      assert.match(e.requestId ?? "", /^req_/);
      return true;
    });
    const client = new TypeSafeClient();
    await assert.rejects(client.systemOne({ model: "jev-9-unknown", state: "x", questions: { q: noul("?") } }), (e: unknown) => {
      assert.ok(e instanceof NotFoundError);
      assert.equal(e.status, 404);
      return true;
    });
    await assert.rejects(client.systemOne({ state: "x", questions: { q: choice("Pick", { only: null }) } }), (e: unknown) => {
      assert.ok(e instanceof UnprocessableEntityError);
      assert.equal(e.message, "422 questions.q.criteria: A Choice needs between 2 and 255 options; got 1.");
      return true;
    });
    await awayFromMinuteEdge();
    const created = await cli(["keys", "create", "--name", "sdk-limited", "--per-minute", "1"], { SVC_DATA_DIR: svc.dataDir });
    const key = created.stdout.trim().split("\n").pop()!;
    const limited = new TypeSafeClient({ apiKey: key, retry: { maxRetries: 0 } });
    await limited.systemOne({ state: "x", questions: { q: noul("Is this short?") } });
    await assert.rejects(limited.systemOne({ state: "x", questions: { q: noul("Is this short?") } }), (e: unknown) => {
      assert.ok(e instanceof RateLimitError);
      assert.equal(e.status, 429);
      const secondsLeft = Math.ceil((60000 - (Date.now() % 60000)) / 1000);
      assert.ok(e.retryAfterMs !== undefined && Math.abs(e.retryAfterMs / 1000 - secondsLeft) <= 2, `retryAfterMs ${e.retryAfterMs}`);
      assert.equal(e.retryAfterMs % 1000, 0);
      return true;
    });
  });
});
