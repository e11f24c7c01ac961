import { existsSync } from "node:fs";
import { createKey } from "../accounts/keys.js";
import { Admission } from "../accounts/admission.js";
import { openAccounts, openAccountStore } from "../accounts/open.js";
import type { AccountStore, KeyLimits } from "../accounts/store.js";
import type { EngineHandle } from "../api/flow.js";
import { AnswerCache } from "../api/answer-cache.js";
import { answerNumbers } from "../engine/answer.js";
import { createEngine } from "../engine/registry.js";
import { startServer } from "../http/server.js";
import { ROUTES } from "../api/routes.js";
import { dbPath, loadConfig, type Config } from "../config.js";
import type { Question } from "../questions/question.js";
import { flagInt, flagString, parseArgs, subcommandError, type Args } from "./args.js";

const USAGE = `svc: a self-hostable decision service

  svc serve                          start the HTTP server (HOST, PORT, SVC_DATA_DIR, ...)
  svc keys create --name N [--per-minute N] [--per-day N] [--monthly-tokens N]
                                     create a key; the key is printed once, alone on the last line
  svc keys list                      list keys (never the keys themselves)
  svc keys revoke <id|prefix>        revoke a key
  svc usage [--month YYYY-MM] [--key <id|prefix>] [--json]
                                     requests and input tokens per key for a month (default: this month)
  svc ask --state TEXT (--noul Q | --choice Q --options a,b,c | --score Q --levels l0,l1,l2)
                                     ask the model one question from the command line
  svc batch IN.jsonl OUT.jsonl [--url URL --key KEY] [--concurrency N]
                                     answer one System One request per line (or {state, questions}), in this
                                     process or against a running service; resumes an interrupted run
  svc calibrate --data FILE.jsonl --name NAME --key <id|prefix> [--target 0.9] [--plot FILE.svg] [--json]
                                     fit a calibration from a key's own labeled examples (also POST /v1/calibrations)
  svc models list [--json]           the built-in model, installed models, and the one svc serve uses
  svc models pull <hf-id> [--revision R] [--file onnx/model.onnx]
                                     install an ONNX NLI model from the Hugging Face Hub (docs/models.md)
  svc models use <name|path|builtin> make a model the one svc serve uses (SVC_MODEL overrides it)
  svc eval [--dir eval/dev] [--split all|fit|test] [--threshold X] [--json] [--plot FILE.svg]
                                     accuracy and calibration on the labeled set; --plot draws a reliability diagram
  svc eval --descriptions [--dir D] [--split S] [--json]
                                     the questions with option descriptions or true/false meanings, answered
                                     as written and without them, accuracy side by side
  svc eval --public DATA [--per-set N] [--per-intent N] [--json]
                                     public sets never trained on (NLI, held-out intents) from the data folder
  svc help, svc --help               this text

Keys, usage and installed models live in the data folder: SVC_DATA_DIR, else $XDG_DATA_HOME/svc, else
~/.local/share/svc. A command that starts a new store there says so on stderr.
`;

const COMMANDS = ["serve", "keys", "usage", "ask", "batch", "calibrate", "models", "eval", "help"];
const KEYS_COMMANDS = ["create", "list", "revoke"];

/**
 * Opens the store (PostgreSQL with SVC_DATABASE_URL, else SQLite); a new SQLite file is announced on
 * stderr with its folder, so a command run from an unexpected place is noticed.
 */
function openStore(config: Config, serve = false): Promise<AccountStore> {
  if (config.shared.databaseUrl === null && !existsSync(dbPath(config))) {
    process.stderr.write(`svc: new key store in ${config.dataDir} (set SVC_DATA_DIR to use another folder)\n`);
  }
  return openAccountStore(config, serve);
}

async function withStore<T>(config: Config, fn: (store: AccountStore) => Promise<T>): Promise<T> {
  const store = await openStore(config);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function keyLimits(args: Args): KeyLimits {
  return {
    perMinute: flagInt(args, "per-minute"),
    perDay: flagInt(args, "per-day"),
    monthlyTokens: flagInt(args, "monthly-tokens"),
  };
}

function fmtLimit(v: number | null): string {
  return v === null ? "default" : v === 0 ? "unlimited" : String(v);
}

function keysCommand(config: Config, args: Args): Promise<number> {
  const [, sub, target] = args.positionals;
  if (sub === undefined || !KEYS_COMMANDS.includes(sub)) throw subcommandError("keys", sub, KEYS_COMMANDS);
  return withStore(config, async (store) => {
    if (sub === "create") {
      const name = flagString(args, "name");
      if (!name) throw new Error("keys create needs --name");
      const { key, record } = await createKey(store, name, keyLimits(args));
      process.stdout.write(
        `created ${record.id} name=${record.name} prefix=${record.prefix} per_minute=${fmtLimit(record.perMinute)} ` +
          `per_day=${fmtLimit(record.perDay)} monthly_tokens=${fmtLimit(record.monthlyTokens)}\n` +
          `the key is shown once; store it now:\n${key}\n`,
      );
      return 0;
    }
    if (sub === "list") {
      const rows = await store.listKeys();
      process.stdout.write("id                    name                 prefix    created                   status   per_minute per_day monthly_tokens\n");
      for (const k of rows) {
        process.stdout.write(
          `${k.id.padEnd(21)} ${k.name.slice(0, 20).padEnd(20)} ${k.prefix}  ${k.createdAt.padEnd(25)} ${(k.revokedAt ? "revoked" : "active").padEnd(8)} ` +
            `${fmtLimit(k.perMinute).padEnd(10)} ${fmtLimit(k.perDay).padEnd(7)} ${fmtLimit(k.monthlyTokens)}\n`,
        );
      }
      return 0;
    }
    if (sub === "revoke") {
      if (!target) throw new Error("keys revoke needs an id or a prefix");
      const k = await store.revokeKey(target);
      if (!k) {
        process.stderr.write(`svc: no key with id or prefix ${target}\n`);
        return 1;
      }
      process.stdout.write(`revoked ${k.id} (${k.name}, prefix ${k.prefix}) at ${k.revokedAt}\n`);
      return 0;
    }
    throw subcommandError("keys", sub, KEYS_COMMANDS);
  });
}

function monthRange(month: string | undefined): { from: number; to: number; label: string } {
  const now = new Date();
  const m = month ?? `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, "0")}`;
  const match = /^(\d{4})-(\d{2})$/.exec(m);
  if (!match || Number(match[2]) < 1 || Number(match[2]) > 12) throw new Error(`--month must be YYYY-MM, got ${m}`);
  const y = Number(match[1]);
  const mo = Number(match[2]) - 1;
  return { from: Date.UTC(y, mo, 1), to: Date.UTC(y, mo + 1, 1), label: m };
}

function usageCommand(config: Config, args: Args): Promise<number> {
  const { from, to, label } = monthRange(flagString(args, "month"));
  const key = flagString(args, "key");
  return withStore(config, async (store) => {
    const rows = await store.report(from, to, key);
    if (key && rows.length === 0) {
      process.stderr.write(`svc: no key with id or prefix ${key}\n`);
      return 1;
    }
    if (args.flags.has("json")) {
      const keys = rows.map((r) => ({ key_id: r.keyId, name: r.name, prefix: r.prefix, requests: r.requests, cached_requests: r.cachedRequests, input_tokens: r.inputTokens }));
      process.stdout.write(`${JSON.stringify({ month: label, keys })}\n`);
      return 0;
    }
    process.stdout.write(`usage for ${label} (UTC)\nid                    name                 prefix    requests    cached  input_tokens\n`);
    for (const r of rows) {
      process.stdout.write(
        `${r.keyId.padEnd(21)} ${r.name.slice(0, 20).padEnd(20)} ${r.prefix}  ${String(r.requests).padStart(8)}  ${String(r.cachedRequests).padStart(8)}  ${String(r.inputTokens).padStart(12)}\n`,
      );
    }
    return 0;
  });
}

async function serveCommand(config: Config): Promise<number> {
  const store = await openStore(config, true);
  if ((await store.listKeys()).length === 0) {
    try {
      const { key, record } = await createKey(
        store,
        "bootstrap",
        { perMinute: null, perDay: null, monthlyTokens: null },
        config.bootstrapKey ?? undefined,
      );
      process.stdout.write(
        `no keys yet: created ${record.id} (prefix ${record.prefix}).` +
          (config.bootstrapKey ? " It is the key from SVC_BOOTSTRAP_KEY.\n" : ` The key is shown once:\n${key}\n`),
      );
    } catch (err) {
      // Instances started together on an empty shared store: one of them created the first key.
      if ((await store.listKeys()).length === 0) throw err;
    }
  }
  const accounts = await openAccounts(config, store).catch(async (err) => {
    await store.close();
    throw err;
  });
  const handle: EngineHandle = { engine: createEngine({ workers: config.workers, dataDir: config.dataDir }), state: "loading" };
  const running = await startServer(
    ROUTES,
    {
      engine: handle,
      cache: new AnswerCache({ windowMs: config.cache.windowMs, entries: config.cache.entries, shared: accounts.sharedAnswers }),
      store,
      limiter: accounts.limiter,
      dependencies: accounts.dependencies,
      admission: new Admission(config.admission),
      bodyTimeoutMs: config.bodyTimeoutMs,
      log: config.log,
      maxConnections: config.maxConnections,
      metrics: config.metrics ?? undefined,
    },
    config.host,
    config.port,
  );
  process.stdout.write(`svc listening on ${running.url}\n`);
  if (running.metricsUrl) process.stdout.write(`metrics on ${running.metricsUrl}/metrics\n`);
  const load = async (): Promise<void> => {
    const t0 = performance.now();
    try {
      await handle.engine.load();
      handle.state = "ready";
      process.stdout.write(`model ${handle.engine.info.backend} ready in ${Math.round(performance.now() - t0)} ms\n`);
    } catch (err) {
      handle.state = "failed";
      process.stderr.write(`svc: the model could not be loaded: ${(err as Error).message}; retrying in 30 s\n`);
      setTimeout(() => void load(), 30_000).unref();
    }
  };
  void load();
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      process.stdout.write(`${signal}: finishing in-flight requests\n`);
      let code = 0;
      void running
        .shutdown(config.shutdownGraceMs)
        .then(() => handle.engine.close())
        .finally(() => accounts.close())
        .catch((err: Error) => {
          // Every answered request's record was committed before its answer; this is the close itself.
          process.stderr.write(`svc: stopping: ${err.message}\n`);
          code = 1;
        })
        .finally(() => {
          process.stdout.write("stopped\n");
          resolve(code);
        });
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
  });
}

function splitList(v: string | undefined, flag: string): string[] {
  if (!v) throw new Error(`--${flag} needs a comma-separated list`);
  return v.split(",").map((s) => s.trim());
}

async function askCommand(config: Config, args: Args): Promise<number> {
  const state = flagString(args, "state");
  if (state === undefined) throw new Error("ask needs --state");
  let q: Question;
  if (args.flags.has("noul")) {
    q = { key: "q", kind: "noul", text: flagString(args, "noul") ?? null, options: [], yes: null, no: null };
  } else if (args.flags.has("choice")) {
    const options = splitList(flagString(args, "options"), "options").map((key) => ({ key, description: null }));
    q = { key: "q", kind: "choice", text: flagString(args, "choice") ?? null, options, yes: null, no: null };
  } else if (args.flags.has("score")) {
    const levels = splitList(flagString(args, "levels"), "levels").map((d, i) => ({ key: String(i), description: d }));
    q = { key: "q", kind: "score", text: flagString(args, "score") ?? null, options: levels, yes: null, no: null };
  } else throw new Error("ask needs one of --noul, --choice or --score");
  const engine = createEngine({ workers: config.workers || 1, dataDir: config.dataDir });
  try {
    await engine.load();
    const plan = engine.plan(state, [q]);
    const raw = await engine.run(plan);
    const a = answerNumbers(q.kind, raw[0], q.options.map((o) => o.key), engine.calibration);
    const out =
      q.kind === "noul"
        ? { noul: a.probabilities[1], confidence: a.confidence }
        : {
            answer: q.kind === "choice" ? q.options[a.best].key : a.expected,
            probabilities: Object.fromEntries(q.options.map((o, i) => [o.key, a.probabilities[i]])),
            confidence: a.confidence,
          };
    process.stdout.write(`${JSON.stringify({ ...out, input_tokens: plan.inputTokens }, null, 2)}\n`);
    return 0;
  } finally {
    await engine.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ["json", "help", "descriptions"]);
  const cmd = args.positionals[0];
  if (cmd === "help" || cmd === "-h" || args.flags.has("help")) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (cmd === undefined) throw new Error(`missing command: use ${COMMANDS.join(", ")}\n${USAGE}`);
  const config = loadConfig();
  switch (cmd) {
    case "serve":
      return serveCommand(config);
    case "keys":
      return keysCommand(config, args);
    case "usage":
      return usageCommand(config, args);
    case "ask":
      return askCommand(config, args);
    case "batch": {
      const { batchCommand } = await import("./batch.js");
      return batchCommand(config, args);
    }
    case "calibrate": {
      const { calibrateCommand } = await import("./calibrate.js");
      return calibrateCommand(config, args);
    }
    case "models": {
      const { modelsCommand } = await import("./models.js");
      return modelsCommand(config, args);
    }
    case "eval": {
      const { evalCommand } = await import("./eval.js");
      return evalCommand(config, args);
    }
    default:
      throw new Error(`unknown command ${cmd}\n${USAGE}`);
  }
}
