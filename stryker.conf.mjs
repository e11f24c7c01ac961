// StrykerJS over the modules that hold the README's promises (test/mutation.mjs lists them and their
// tests). node:test has no Stryker runner: the command runner builds once (buildCommand) and then runs
// each mutant's own tests. Takes tens of minutes on 2 cores; not part of CI. Results: docs/mutation.md.
import { selected } from "./test/mutation.mjs";

// SVC_MUTATE=limits,keys runs only those modules (and their tests), into a report of their own.
const only = process.env.SVC_MUTATE ? process.env.SVC_MUTATE.replace(/[^a-z0-9,-]/gi, "").replace(/,/g, "-") : "all";

export default {
  testRunner: "command",
  commandRunner: { command: "node test/mutation.mjs run" },
  buildCommand: "npx tsc -p tsconfig.json",
  mutate: selected(),
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.json",
  coverageAnalysis: "off",
  concurrency: 2,
  timeoutMS: 30_000,
  dryRunTimeoutMinutes: 10,
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: `reports/mutation/${only}.json` },
  ignorePatterns: ["dist", "reports", "training", "bench/results"],
  // A sandbox folder per selection, so that runs of different modules can go side by side.
  tempDirName: `.stryker-tmp/${only}`,
};
