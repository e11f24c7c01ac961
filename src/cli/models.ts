import { existsSync } from "node:fs";
import { PUBLIC_MODELS } from "../api/models.js";
import type { Config } from "../config.js";
import { createOnnxEngine } from "../engine/onnx/onnx-engine.js";
import { selectModel } from "../engine/registry.js";
import { human, pullModel } from "../models/pull.js";
import { listInstalled, resolveChoice, writeActive } from "../models/store.js";
import { flagString, subcommandError, type Args } from "./args.js";

const SERVES = PUBLIC_MODELS.join(", ");

interface Row {
  name: string;
  hub_id: string | null;
  revision: string | null;
  size: number | null;
  pulled_at: string | null;
  path: string | null;
  active: boolean;
  serves: string[];
}

function list(config: Config, json: boolean): number {
  const { choice, from } = selectModel({ dataDir: config.dataDir });
  const installed = listInstalled(config.dataDir);
  const rows: Row[] = [
    { name: "builtin", hub_id: null, revision: null, size: null, pulled_at: null, path: null, active: choice.kind === "builtin", serves: [] },
    ...installed.map((m) => ({
      name: m.name,
      hub_id: m.manifest?.hub_id ?? null,
      revision: m.manifest?.revision ?? null,
      size: m.size,
      pulled_at: m.manifest?.pulled_at ?? null,
      path: m.dir,
      active: choice.kind === "onnx" && choice.dir === m.dir,
      serves: [],
    })),
  ];
  // A folder chosen by path (not pulled) is listed too, so the active model is always on the list.
  if (choice.kind === "onnx" && !rows.some((r) => r.active)) {
    rows.push({ name: choice.name, hub_id: null, revision: null, size: null, pulled_at: null, path: choice.dir, active: true, serves: [] });
  }
  for (const r of rows) if (r.active) r.serves = [...PUBLIC_MODELS];
  if (json) {
    process.stdout.write(`${JSON.stringify({ models: rows, active_from: from })}\n`);
    return 0;
  }
  process.stdout.write(`  ${"NAME".padEnd(48)} ${"REVISION".padEnd(12)} ${"SIZE".padStart(10)}  PULLED\n`);
  for (const r of rows) {
    const name = r.name === "builtin" ? "builtin (built-in model: en, es, pt, fr, de)" : r.hub_id ? r.name : `${r.name} (${r.path})`;
    process.stdout.write(
      `${r.active ? "*" : " "} ${name.padEnd(48)} ${(r.revision?.slice(0, 12) ?? "-").padEnd(12)} ${(r.size === null ? "-" : human(r.size)).padStart(10)}  ${r.pulled_at ?? "-"}\n`,
    );
  }
  const why = { option: "", SVC_MODEL: " (chosen by SVC_MODEL)", "active.json": " (chosen with svc models use)", default: " (the default)" }[from];
  process.stdout.write(`* answers as ${SERVES}${why}\n`);
  return 0;
}

async function use(config: Config, target: string | undefined): Promise<number> {
  if (!target) throw new Error("models use needs a model name, a folder path or builtin");
  const choice = resolveChoice(config.dataDir, target);
  let label: string;
  if (choice.kind === "builtin") {
    writeActive(config.dataDir, null);
    label = "the built-in model";
  } else {
    if (!existsSync(choice.dir) && /^[\w.-]+\/[\w.-]+$/.test(target)) {
      process.stderr.write(`svc: ${target} is neither a folder nor an installed model; pull it first: svc models pull ${target}\n`);
      return 1;
    }
    // Load it once now, so a broken folder is reported here rather than when the server starts.
    const engine = createOnnxEngine(choice.dir, { threads: 1 });
    try {
      await engine.load();
    } catch (err) {
      process.stderr.write(`svc: ${(err as Error).message}\n`);
      return 1;
    } finally {
      await engine.close();
    }
    const installed = listInstalled(config.dataDir).some((m) => m.dir === choice.dir);
    writeActive(config.dataDir, installed ? choice.name : choice.dir);
    label = `${choice.name} (backend ${engine.info.backend})`;
  }
  process.stdout.write(`svc serve now uses ${label}; it answers as ${SERVES}. Restart a running server to switch.\n`);
  if (process.env.SVC_MODEL) process.stdout.write(`note: SVC_MODEL=${process.env.SVC_MODEL} is set and takes precedence\n`);
  return 0;
}

async function pull(config: Config, args: Args, hubId: string | undefined): Promise<number> {
  if (!hubId) throw new Error("models pull needs a Hugging Face model id, e.g. MoritzLaurer/multilingual-MiniLMv2-L6-mnli-xnli");
  const t0 = performance.now();
  const r = await pullModel({
    hubId,
    revision: flagString(args, "revision"),
    file: flagString(args, "file"),
    dataDir: config.dataDir,
  });
  const total = r.manifest.files.reduce((s, f) => s + f.size, 0);
  const what = `${r.manifest.hub_id}@${r.manifest.revision.slice(0, 12)}`;
  process.stdout.write(
    r.alreadyInstalled
      ? `${r.name} is already installed at ${what}\n`
      : `installed ${r.name} (${what}, ${r.manifest.files.length} files, ${human(total)}) in ${Math.round(performance.now() - t0)} ms\n` +
          `use it with: svc models use ${r.name}   (or SVC_MODEL=${r.name})\n`,
  );
  return 0;
}

/** `svc models list | pull | use`. */
export async function modelsCommand(config: Config, args: Args): Promise<number> {
  const [, sub, target] = args.positionals;
  switch (sub) {
    case "list":
      return list(config, args.flags.has("json"));
    case "pull":
      return pull(config, args, target);
    case "use":
      return use(config, target);
    default:
      throw subcommandError("models", sub, ["list", "pull", "use"]);
  }
}
