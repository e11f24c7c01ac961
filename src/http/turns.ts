/**
 * Large bodies are decoded, parsed and validated one per turn of the event loop. When many arrive
 * together, node delivers them all in one poll phase, and parsing them back to back held the loop
 * for ~1 s (100 bodies of 65 KB, ~8 ms each), so /healthz and small requests waited behind them.
 * Taking them in turns lets the poll phase run between any two.
 */
const waiting: (() => void)[] = [];
let draining = false;

function step(): void {
  waiting.shift()?.();
  // An immediate queued from inside the check phase runs in the next turn of the loop, after its poll phase.
  if (waiting.length > 0) setImmediate(step);
  else draining = false;
}

/** Resolves when it is this caller's turn; what it does synchronously after that runs alone in its turn. */
export function ownTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!draining) {
      draining = true;
      setImmediate(step);
    }
  });
}
