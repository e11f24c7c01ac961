// StrykerJS over the modules that hold the README's promises (test/mutation.mjs lists them and their
// tests). node:test has no Stryker runner: the command runner builds once (buildCommand) and then runs
// each mutant's own tests. Takes tens of minutes on 2 cores; not part of CI. Results: docs/mutation.md.
import { MODULES } from "./test/mutation.mjs";

export default {
  testRunner: "command",
  commandRunner: { command: "node test/mutation.mjs run" },
  buildCommand: "npx tsc -p tsconfig.json",
  mutate: Object.keys(MODULES),
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.json",
  coverageAnalysis: "off",
  concurrency: 2,
  timeoutMS: 30_000,
  dryRunTimeoutMinutes: 10,
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  ignorePatterns: ["dist", "reports", "training", "bench/results"],
};
