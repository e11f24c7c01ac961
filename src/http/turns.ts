import { Lanes } from "../engine/lanes.js";

/**
 * Large bodies are decoded, parsed and validated, and large requests planned, one per turn of the
 * event loop. When many arrive together, node delivers them all in one poll phase, and handling
 * them back to back held the loop for ~1 s (100 bodies of 65 KB, ~8 ms each), so /healthz and small
 * requests waited behind them. Taking them in turns lets the poll phase run between any two, and
 * taking keys in turn keeps one key's hundred bodies from delaying another key's one.
 */
const waiting = new Lanes<() => void>();
let draining = false;

function step(): void {
  const turn = waiting.peek();
  if (turn) {
    const go = turn.queue.shift()!;
    waiting.served(turn.lane, 1);
    go();
  }
  // An immediate queued from inside the check phase runs in the next turn of the loop, after its poll phase.
  if (waiting.size > 0) setImmediate(step);
  else draining = false;
}

/** Resolves when it is this caller's turn (lanes, e.g. keys, alternate); what it then does synchronously runs alone in its turn. */
export function ownTurn(lane: string): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(lane, resolve);
    if (!draining) {
      draining = true;
      setImmediate(step);
    }
  });
}
