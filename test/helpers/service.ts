import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { watchService } from "./openapi.js";

export const ROOT = resolve(fileURLToPath(new URL("../../../", import.meta.url)));
export const BIN = join(ROOT, "bin", "svc.js");

export function newKey(): string {
  return `svc_${randomBytes(4).toString("hex")}_${randomBytes(24).toString("base64url")}`;
}

export interface Service {
  url: string;
  key: string;
  dataDir: string;
  proc: ChildProcess;
  output(): string;
  /** Resolves with the exit code after the signal. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI (`node bin/svc.js ...`) with the given data dir. */
export function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolveRun) => {
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, SVC_LOG: "off", ...env } });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    p.on("close", (code) => resolveRun({ code, stdout, stderr }));
  });
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "svc-test-"));
}

/** A labeled set of three items, in the format of eval/dev/*.jsonl. */
export function tinySet(): string {
  const dir = join(tempDir(), "set");
  mkdirSync(dir);
  const items = [
    { id: "t1", group: "t1", lang: "en", domain: "support_routing", state: "I was charged twice on my credit card this month.", type: "choice", instructions: "What is this about?", criteria: { billing: "payments, charges, refunds", technical: "bugs, errors, crashes" }, label: "billing" },
    { id: "t2", group: "t2", lang: "en", domain: "facts", state: "The meeting moved to Friday.", type: "noul", instructions: "Does the text mention a day of the week?", criteria: null, label: true },
    { id: "t3", group: "t3", lang: "es", domain: "urgency", state: "El servidor está caído y nadie puede trabajar.", type: "score", instructions: "How urgent is this?", criteria: ["low", "medium", "critical"], label: 2 },
  ];
  writeFileSync(join(dir, "tiny.jsonl"), items.map((i) => JSON.stringify(i)).join("\n") + "\n");
  return dir;
}

/**
 * Starts `svc serve` as a child process on a free port with a fresh data dir and a known bootstrap
 * key; resolves once it listens (and, unless waitForModel is false, once the model is ready).
 */
export function startService(
  opts: { env?: Record<string, string>; dataDir?: string; waitForModel?: boolean; key?: string } = {},
): Promise<Service> {
  const dataDir = opts.dataDir ?? tempDir();
  const key = opts.key ?? newKey();
  const proc = spawn(process.execPath, [BIN, "serve"], {
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: "0",
      SVC_DATA_DIR: dataDir,
      SVC_BOOTSTRAP_KEY: key,
      SVC_LOG: "off",
      ...opts.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const wait = opts.waitForModel ?? true;
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in time:\n${out}`)), 120_000);
    const check = () => {
      const m = /svc listening on (http:\/\/\S+)/.exec(out);
      if (m && (!wait || /model \S+ ready/.test(out))) {
        clearTimeout(timer);
        watchService(m[1]);
        proc.stdout!.off("data", check);
        resolveStart({
          url: m[1],
          key,
          dataDir,
          proc,
          output: () => out,
          stop: (signal = "SIGTERM") =>
            new Promise((done) => {
              if (proc.exitCode !== null) return done(proc.exitCode);
              proc.once("exit", (code) => done(code));
              proc.kill(signal);
            }),
        });
      }
    };
    proc.stdout!.on("data", check);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${out}`));
    });
  });
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

/** POSTs JSON (or raw bytes) with the key; returns status, headers and parsed body. */
export async function post(
  svc: { url: string; key: string },
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const payload = Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const res = await fetch(`${svc.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${svc.key}`, "content-type": "application/json", ...headers },
    body: typeof payload === "string" ? payload : new Uint8Array(payload),
  });
  return reply(res);
}

export async function get(svc: { url: string; key: string }, path: string, headers: Record<string, string> = {}): Promise<Reply> {
  return reply(await fetch(`${svc.url}${path}`, { headers: { authorization: `Bearer ${svc.key}`, ...headers } }));
}

/** Status, headers and the body parsed as JSON (or left as text when it is not JSON). */
export async function reply(res: Response): Promise<Reply> {
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* keep text */
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** Minute windows are fixed; start a burst well inside one so it cannot straddle two. */
export async function awayFromMinuteEdge(): Promise<void> {
  const into = Date.now() % 60000;
  if (into > 50000) await new Promise((r) => setTimeout(r, 60000 - into + 100));
}
