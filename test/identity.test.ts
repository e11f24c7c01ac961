import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { get, post, ROOT, startService, tempDir } from "./helpers/service.js";

// Which model answered, exactly: a short hash of the model files and calibration on every answer.

const HASH = /^[0-9a-f]{12}$/;

test("every answer of both APIs carries the served model's hash, the same as GET /v1/models lists", async () => {
  const svc = await startService();
  try {
    const models = (await get(svc, "/v1/models")).body.models as { name: string; hash: string; languages: string[]; release_date: string; default_min_confidence: number }[];
    const hash = models[0].hash;
    assert.match(hash, HASH);
    assert.deepEqual(models.map((m) => m.hash), models.map(() => hash));
    assert.deepEqual(models[0].languages, ["en", "es", "pt", "fr", "de"]);
    assert.equal(models[0].release_date, "2026-11-28");
    const s1 = await post(svc, "/v1/systemone", { model: "svc-latest", state: "hi", questions: { q: { type: "noul", instructions: "Is it a greeting?" } } });
    assert.equal(s1.status, 200);
    assert.equal(s1.headers.get("x-model-hash"), hash);
    const d = await post(svc, "/v1/decide", { model: "svc-latest", state: "hi", questions: { q: { type: "binary", question: "Is it a greeting?" } } });
    assert.equal(d.status, 200);
    assert.equal(d.headers.get("x-model-hash"), hash);
    assert.equal((d.body as { model_hash: string }).model_hash, hash);
  } finally {
    await svc.stop();
  }
});

test("the hash changes when a model file changes, and only then", async () => {
  const dir = join(tempDir(), "model");
  cpSync(join(ROOT, "test", "fixtures", "tiny-nli"), dir, { recursive: true });
  const served = async (): Promise<string> => {
    const svc = await startService({ env: { SVC_MODEL: dir } });
    try {
      const r = await post(svc, "/v1/systemone", { model: "svc-latest", state: "hi", questions: { q: { type: "noul", instructions: "Is it a greeting?" } } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const h = r.headers.get("x-model-hash") ?? "";
      assert.match(h, HASH);
      return h;
    } finally {
      await svc.stop();
    }
  };
  const first = await served();
  assert.equal(await served(), first, "the same files give the same hash");
  const cal = join(dir, "svc-model.json");
  const model = JSON.parse(readFileSync(cal, "utf8")) as Record<string, unknown>;
  writeFileSync(cal, JSON.stringify({ ...model, description: "changed" }));
  const second = await served();
  assert.notEqual(second, first, "a changed calibration/configuration file changes the hash");
});
