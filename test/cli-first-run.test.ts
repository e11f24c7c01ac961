import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { cli, post, startService, tempDir, tinySet } from "./helpers/service.js";

describe("svc CLI for a new user", () => {
  test("help exits 0 in every spelling; a missing or unknown subcommand names the choices", async () => {
    const env = { SVC_DATA_DIR: tempDir() };
    for (const spelling of [["--help"], ["help"], ["-h"], ["keys", "--help"]]) {
      const r = await cli(spelling, env);
      assert.equal(r.code, 0, spelling.join(" "));
      assert.match(r.stdout, /^svc: a self-hostable decision service\n/);
      for (const cmd of ["svc models list", "svc models pull <hf-id>", "svc models use <name|path|builtin>", "--plot FILE.svg"]) assert.ok(r.stdout.includes(cmd), cmd);
      assert.equal(r.stderr, "");
    }
    const bare = await cli([], env);
    assert.equal(bare.code, 1);
    assert.match(bare.stderr, /^svc: missing command: use serve, keys, usage, ask, batch, calibrate, models, eval, help\n/);
    const models = await cli(["models"], env);
    assert.equal(models.code, 1);
    assert.equal(models.stderr, "svc: models needs a subcommand: list, pull or use\n");
    const badModels = await cli(["models", "frob"], env);
    assert.equal(badModels.stderr, "svc: unknown models subcommand frob; use list, pull or use\n");
    const keys = await cli(["keys"], env);
    assert.equal(keys.code, 1);
    assert.equal(keys.stderr, "svc: keys needs a subcommand: create, list or revoke\n");
  });

  test("models list names the built-in model with its languages", async () => {
    const r = await cli(["models", "list"], { SVC_DATA_DIR: tempDir() });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\n\* builtin \(built-in model: en, es, pt, fr, de\) /);
  });

  test("a new store says which data folder it is in, once; without SVC_DATA_DIR the folder is per user", async () => {
    const dir = join(tempDir(), "fresh");
    const first = await cli(["keys", "list"], { SVC_DATA_DIR: dir });
    assert.equal(first.code, 0);
    assert.equal(first.stderr, `svc: new key store in ${dir} (set SVC_DATA_DIR to use another folder)\n`);
    const second = await cli(["keys", "list"], { SVC_DATA_DIR: dir });
    assert.equal(second.stderr, "");
    const xdg = tempDir();
    const perUser = await cli(["keys", "list"], { SVC_DATA_DIR: "", XDG_DATA_HOME: xdg });
    assert.equal(perUser.stderr, `svc: new key store in ${join(xdg, "svc")} (set SVC_DATA_DIR to use another folder)\n`);
    // Without XDG_DATA_HOME: ~/.local/share/svc (HOME points at a temporary folder here).
    const home = tempDir();
    const noXdg = await cli(["keys", "list"], { SVC_DATA_DIR: "", XDG_DATA_HOME: "", HOME: home });
    assert.equal(noXdg.stderr, `svc: new key store in ${join(home, ".local", "share", "svc")} (set SVC_DATA_DIR to use another folder)\n`);
    assert.notEqual(home, homedir());
  });

  test("usage --json is snake_case like the API", async () => {
    const svc = await startService();
    try {
      const body = { model: "svc-latest", state: "hello", questions: { q: { type: "noul", instructions: "Is this a greeting?" } } };
      const r = await post(svc, "/v1/systemone", body);
      assert.equal(r.status, 200);
      const u = await cli(["usage", "--json"], { SVC_DATA_DIR: svc.dataDir });
      assert.equal(u.code, 0, u.stderr);
      const parsed = JSON.parse(u.stdout);
      assert.deepEqual(Object.keys(parsed), ["month", "keys"]);
      assert.deepEqual(Object.keys(parsed.keys[0]), ["key_id", "name", "prefix", "requests", "cached_requests", "input_tokens"]);
      assert.equal(parsed.keys[0].requests, 1);
      assert.equal(parsed.keys[0].input_tokens, r.body.usage.input_tokens);
    } finally {
      await svc.stop();
    }
  });

  test("eval --plot writes a reliability diagram per language as SVG; eval --json is snake_case", async () => {
    const dir = tinySet();
    const svg = join(tempDir(), "reliability.svg");
    const r = await cli(["eval", "--dir", dir, "--json", "--plot", svg], { SVC_DATA_DIR: tempDir() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, `svc: reliability diagram written to ${svg}\n`);
    const result = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(result.curve[0]), ["threshold", "coverage", "answered_accuracy", "abstained_accuracy", "n"]);
    const text = readFileSync(svg, "utf8");
    assert.match(text, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" /);
    assert.match(text, /<\/svg>\n$/);
    // One legend entry per language and one for all, each with its count; one point per non-empty bin.
    assert.match(text, />en \(n=2, ECE \d\.\d{3}\)</);
    assert.match(text, />es \(n=1, ECE \d\.\d{3}\)</);
    assert.match(text, />all \(n=3, ECE \d\.\d{3}\)</);
    assert.equal((text.match(/<title>en: /g) ?? []).length >= 1, true);
    assert.equal((text.match(/<title>es: 1 answers /g) ?? []).length, 1);
  });
});
