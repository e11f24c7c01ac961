/**
 * scripts/preflight.mjs, which `npm test` runs first: a missing system tool stops it with one line that
 * names the command to run; with everything there it says nothing.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/service.js";

const SCRIPT = join(ROOT, "scripts", "preflight.mjs");

/** A PATH with node on it and nothing else (no zstd). */
const bare = mkdtempSync(join(tmpdir(), "svc-preflight-"));
symlinkSync(process.execPath, join(bare, "node"));
after(() => rmSync(bare, { recursive: true, force: true }));

function preflight(env: Record<string, string>) {
  // SVC_PREFLIGHT_NO_INSTALL: never apt-get from a test, even as root.
  return spawnSync(process.execPath, [SCRIPT], { cwd: ROOT, encoding: "utf8", timeout: 30_000, env: { ...process.env, SVC_PREFLIGHT_NO_INSTALL: "1", ...env } });
}

describe("npm test preflight", () => {
  test("zstd not on PATH and no installing: exit 1 with one line naming the apt-get command", () => {
    const r = preflight({ PATH: bare });
    const missing = existsSync("/usr/bin/chromium") ? ["zstd"] : ["zstd", "chromium"];
    const sudo = process.getuid?.() === 0 ? "" : "sudo ";
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr, `svc tests need ${missing.join(" and ")}: run ${sudo}apt-get install -y ${missing.join(" ")}\n`);
  });

  test("everything there (zstd, chromium, PostgreSQL, Redis): exit 0, no output", () => {
    const r = preflight({});
    assert.equal(r.stderr, "");
    assert.equal(r.stdout, "");
    assert.equal(r.status, 0);
  });
});
