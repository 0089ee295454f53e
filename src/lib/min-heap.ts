// A binary min-heap of (time, item) pairs: what expires next, in O(log n) a push or a pop, so a
// process that holds a million expiring entries finds the ones due without sorting them all on
// each change (rules/registry.ts). Entries are not removed from the middle: a holder checks a
// popped pair against what it still holds and drops it when it changed since (lazy deletion).
export class MinHeap<T> {
  private readonly times: number[] = [];
  private readonly items: T[] = [];

  get size(): number {
    return this.times.length;
  }

  /** The smallest time held, or undefined. */
  peek(): number | undefined {
    return this.times[0];
  }

  push(time: number, item: T): void {
    this.times.push(time);
    this.items.push(item);
    this.up(this.times.length - 1);
  }

  /** The pair of the smallest time, removed; undefined when empty. */
  pop(): { time: number; item: T } | undefined {
    const n = this.times.length;
    if (n === 0) return undefined;
    const out = { time: this.times[0]!, item: this.items[0]! };
    const lastTime = this.times.pop()!;
    const lastItem = this.items.pop()!;
    if (n > 1) {
      this.times[0] = lastTime;
      this.items[0] = lastItem;
      this.down(0);
    }
    return out;
  }

  /** A heap of these pairs, built in O(n). */
  static of<T>(pairs: Iterable<[number, T]>): MinHeap<T> {
    const heap = new MinHeap<T>();
    for (const [time, item] of pairs) {
      heap.times.push(time);
      heap.items.push(item);
    }
    for (let i = (heap.times.length >>> 1) - 1; i >= 0; i--) heap.down(i);
    return heap;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >>> 1;
      if (this.times[parent]! <= this.times[i]!) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.times.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) return;
      const right = left + 1;
      const least = right < n && this.times[right]! < this.times[left]! ? right : left;
      if (this.times[i]! <= this.times[least]!) return;
      this.swap(i, least);
      i = least;
    }
  }

  private swap(a: number, b: number): void {
    [this.times[a], this.times[b]] = [this.times[b]!, this.times[a]!];
    [this.items[a], this.items[b]] = [this.items[b]!, this.items[a]!];
  }
}
