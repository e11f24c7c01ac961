/**
 * Mutation testing with StrykerJS (stryker.conf.mjs; `npm run test:mutation`): the modules that hold
 * the README's promises, and for each the test files that are run against its mutants. Stryker's
 * command runner runs `node test/mutation.mjs run` once per mutant, with the mutant's id in
 * __STRYKER_ACTIVE_MUTANT__ (the server processes the tests start inherit it); this finds the module
 * that holds that mutant in the instrumented sources and runs only that module's tests, so a mutant
 * costs seconds rather than a whole suite. Without a mutant (Stryker's first, unmutated run) every
 * listed test runs. `node test/mutation.mjs report` prints the score per module from Stryker's JSON
 * report.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { pathToFileURL } from "node:url";

/**
 * Module -> the test files (dist/test/<name>.test.js, `name:pattern` for only the tests whose names
 * match) that must kill its mutants, run one after the other until one fails: fastest first.
 */
export const MODULES = {
  "src/accounts/limits.ts": ["accounts-core"],
  "src/accounts/keys.ts": ["accounts-core"],
  "src/accounts/ledger.ts": ["ledger"],
  "src/http/body.ts": ["body"],
  "src/engine/answer.ts": ["answer-math"],
  "src/api/flow.ts": [
    "systemone",
    "decide",
    "availability",
    "onnx-engine:crashed",
    "operator:metrics|SVC_LOG=json",
    "hardening:past the grace period",
    "accounts:quota|in flight|client left|restart|places|record",
    // The stores that answer with promises (PostgreSQL, Redis): reservations and settles awaited, refunds on 503.
    "scale",
  ],
};

/** The modules of this run: those whose paths contain one of SVC_MUTATE's comma-separated parts, else all. */
export function selected() {
  const parts = process.env.SVC_MUTATE?.split(",").filter(Boolean);
  return Object.keys(MODULES).filter((m) => !parts || parts.some((p) => m.includes(p)));
}

function testsFor(mutant) {
  if (mutant === undefined) return [...new Set(selected().flatMap((m) => MODULES[m]))];
  const call = `("${mutant}")`;
  for (const [file, tests] of Object.entries(MODULES)) {
    if (readFileSync(file, "utf8").includes(`stryMutAct_9fa48${call}`)) return tests;
  }
  throw new Error(`mutant ${mutant} is in none of ${Object.keys(MODULES).join(", ")}`);
}

function run() {
  for (const test of testsFor(process.env.__STRYKER_ACTIVE_MUTANT__)) {
    const [name, pattern] = test.split(":");
    const args = ["--test", "--test-reporter=dot", ...(pattern ? [`--test-name-pattern=${pattern}`] : []), `dist/test/${name}.test.js`];
    const r = spawnSync(process.execPath, args, { stdio: "inherit" });
    if (r.status !== 0) process.exit(1);
  }
}

/**
 * Stryker's score per module, from every JSON report in reports/mutation/ (one per run; a module in
 * several takes the newest): killed (and timed out) over killed, timed out, survived and not covered;
 * invalid mutants left out.
 */
function report(dir = "reports/mutation") {
  const files = {};
  const reports = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => `${dir}/${f}`)
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
  for (const f of reports) Object.assign(files, JSON.parse(readFileSync(f, "utf8")).files);
  const rows = [];
  for (const [name, { mutants }] of Object.entries(files)) {
    const count = (...statuses) => mutants.filter((m) => statuses.includes(m.status)).length;
    const detected = count("Killed", "Timeout");
    const valid = detected + count("Survived", "NoCoverage");
    rows.push([name, detected, count("Survived", "NoCoverage"), count("CompileError", "RuntimeError", "Ignored"), valid ? ((100 * detected) / valid).toFixed(1) : "-"]);
  }
  console.log("| module | killed | survived | invalid (type errors) | score % |\n| --- | --- | --- | --- | --- |");
  for (const r of rows) console.log(`| ${r.join(" | ")} |`);
  console.log("\nSurvivors:");
  for (const [name, { mutants }] of Object.entries(files)) {
    for (const m of mutants.filter((x) => x.status === "Survived" || x.status === "NoCoverage")) {
      console.log(`${name}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName}: ${JSON.stringify(m.replacement ?? "")}`);
    }
  }
}

// Only as a command: stryker.conf.mjs imports MODULES from here inside `stryker run`.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === "run") run();
  else if (process.argv[2] === "report") report(process.argv[3]);
}
