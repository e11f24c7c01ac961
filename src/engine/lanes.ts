/**
 * Queues of work, one per lane (a caller's key), served in turn: each take() serves the lane that
 * waited longest since its last turn, so a lane with 12,000 queued items delays another lane's
 * next item by one turn, not by its whole backlog. Within a lane, items keep their order.
 */
export class Lanes<T> {
  /** Map order is the turn order: a served lane moves to the end. */
  private readonly queues = new Map<string, T[]>();
  private count = 0;

  push(lane: string, item: T): void {
    const q = this.queues.get(lane);
    if (q) q.push(item);
    else this.queues.set(lane, [item]);
    this.count++;
  }

  /** The queue of the lane whose turn it is, or null when nothing waits. Call served() after taking from it. */
  peek(): { lane: string; queue: T[] } | null {
    const first = this.queues.entries().next();
    return first.done ? null : { lane: first.value[0], queue: first.value[1] };
  }

  /** Ends `lane`'s turn after `taken` items were removed from its queue: it goes to the back, or away when empty. */
  served(lane: string, taken: number): void {
    const q = this.queues.get(lane);
    if (!q) return;
    this.count -= taken;
    this.queues.delete(lane);
    if (q.length > 0) this.queues.set(lane, q);
  }

  /** Removes and returns every item for which `drop` holds (cancelled work), keeping the turn order. */
  remove(drop: (item: T) => boolean): T[] {
    const out: T[] = [];
    for (const [lane, q] of this.queues) {
      const keep = q.filter((item) => !drop(item) || (out.push(item), false));
      if (keep.length === 0) this.queues.delete(lane);
      else if (keep.length !== q.length) this.queues.set(lane, keep);
    }
    this.count -= out.length;
    return out;
  }

  /** Removes and returns everything. */
  clear(): T[] {
    const out = [...this.queues.values()].flat();
    this.queues.clear();
    this.count = 0;
    return out;
  }

  get size(): number {
    return this.count;
  }
}
