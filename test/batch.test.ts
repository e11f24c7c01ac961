import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, cli, post, startService, tempDir, type Service } from "./helpers/service.js";

// svc batch: a file of requests answered exactly as single requests are, resumable, bad lines skipped.

let svc: Service;
before(async () => {
  svc = await startService();
});
after(async () => {
  await svc.stop();
});

const good = [
  { model: "svc-latest", state: "I was charged twice for my subscription, please refund one payment.", questions: { refund: { type: "noul", instructions: "Does the customer want money back?" }, team: { type: "choice", instructions: "Which team?", criteria: { billing: "payments", technical: null, sales: null } } } },
  { state: "La livraison est arrivée avec trois semaines de retard et le colis était abîmé.", questions: { mood: { type: "score", instructions: "Le client est-il satisfait ?", criteria: ["très mécontent", "neutre", "très content"] } } },
  { model: "svc-latest", state: "Die Besprechung am Freitag wurde abgesagt.", questions: { happens: { type: "noul", instructions: "Findet die Besprechung statt?", criteria: { true: "sie findet statt", false: "sie fällt aus" } } } },
  { model: "svc-latest", state: "", questions: { any: { type: "choice", criteria: ["a", "b"] } } },
];

const read = (file: string): Record<string, unknown>[] =>
  readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>);

test("each line is answered exactly as POST /v1/systemone answers it; bad lines are reported by number and skipped", async () => {
  const dir = tempDir();
  const input = join(dir, "in.jsonl");
  const output = join(dir, "out.jsonl");
  writeFileSync(
    input,
    [JSON.stringify(good[0]), JSON.stringify(good[1]), "{not json", JSON.stringify(good[2]), JSON.stringify({ model: "svc-latest", state: "x", questions: { c: { type: "choice", criteria: { only: null } } } }), "", JSON.stringify(good[3])].join("\n") + "\n",
  );
  const r = await cli(["batch", input, output], { SVC_DATA_DIR: tempDir() });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /line 3 skipped: not JSON/);
  assert.match(r.stderr, /line 5 skipped: .*between 2 and 255 options/);
  assert.match(r.stdout, /^answered 4 requests \(0 already answered before\), skipped 2 bad lines; input tokens (\d+)\n$/);
  const out = read(output);
  assert.deepEqual(out.map((o) => o.line), [1, 2, 4, 7]);
  let tokens = 0;
  for (const [i, o] of out.entries()) {
    const single = await post(svc, "/v1/systemone", { model: "svc-latest", ...good[i] });
    assert.equal(single.status, 200);
    const { line, ...rest } = o;
    assert.equal(typeof line, "number");
    assert.deepEqual(rest, single.body);
    tokens += (single.body as { usage: { input_tokens: number } }).usage.input_tokens;
  }
  assert.equal(Number(/input tokens (\d+)/.exec(r.stdout)![1]), tokens);

  // Against a running service: the same answers.
  const remote = join(dir, "remote.jsonl");
  const rr = await cli(["batch", input, remote, "--url", svc.url, "--key", svc.key]);
  assert.equal(rr.code, 2, rr.stderr);
  assert.match(rr.stderr, /line 5 skipped: HTTP 422: /);
  assert.deepEqual(read(remote), out);
});

test("an interrupted run resumes without asking any line twice, and ends equal to an uninterrupted run", async () => {
  const dir = tempDir();
  const input = join(dir, "in.jsonl");
  const lines = Array.from({ length: 40 }, (_, i) =>
    JSON.stringify({ state: `Ticket ${i}: my order ${1000 + i} has not arrived yet and I need it by Friday.`, questions: { late: { type: "noul", instructions: "Is the order late?" }, topic: { type: "choice", criteria: { delivery: null, billing: null, login: null } } } }),
  );
  writeFileSync(input, lines.join("\n") + "\n");
  const output = join(dir, "out.jsonl");
  const dataDir = tempDir();
  await new Promise<void>((resolveKill, reject) => {
    const p = spawn(process.execPath, [BIN, "batch", input, output], { env: { ...process.env, SVC_DATA_DIR: dataDir } });
    const timer = setInterval(() => {
      if (existsSync(output) && read(output).length >= 3) {
        clearInterval(timer);
        p.kill("SIGKILL");
      }
    }, 20);
    p.once("exit", () => {
      clearInterval(timer);
      resolveKill();
    });
    p.once("error", reject);
  });
  const before = read(output).length;
  assert.ok(before >= 3 && before < 40, String(before));
  appendFileSync(output, '{"line": 99, "model": "svc-1.2'); // a write cut short by the kill
  const r = await cli(["batch", input, output], { SVC_DATA_DIR: dataDir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`${before} lines already answered in .*; resuming with ${40 - before}`));
  assert.match(r.stdout, new RegExp(`^answered ${40 - before} requests \\(${before} already answered before\\), skipped 0 bad lines`));
  const resumed = read(output);
  assert.deepEqual(resumed.map((o) => o.line).sort((a, b) => Number(a) - Number(b)), Array.from({ length: 40 }, (_, i) => i + 1));
  const clean = join(dir, "clean.jsonl");
  assert.equal((await cli(["batch", input, clean], { SVC_DATA_DIR: dataDir })).code, 0);
  const byLine = (xs: Record<string, unknown>[]) => [...xs].sort((a, b) => Number(a.line) - Number(b.line));
  assert.deepEqual(byLine(resumed), byLine(read(clean)));
});
