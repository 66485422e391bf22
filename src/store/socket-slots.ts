/**
 * Slots of open WebSockets, realtime.maxSocketsPerAccount per account. The store is a small
 * contract, as the rate limits' is: in process for one node (SQLite), in the database when several
 * nodes serve one account (PostgreSQL).
 */
import type { SocketSlot, SocketSlotRepository } from './socket-slot-repository.js';

export type { SocketSlot };

export interface SocketSlotStore {
  /** Take one of the account's `max` slots for `slot`; false when all are held. Never throws. */
  take(slot: SocketSlot, max: number): boolean | Promise<boolean>;
  /** The socket closed: its slot is free (at once on this node; a database store frees it in the background). */
  release(id: string): void;
  /** Free every slot this node holds. */
  close(): Promise<void>;
}

export class InProcessSocketSlots implements SocketSlotStore {
  private readonly perAccount = new Map<string, number>();
  private readonly accountOf = new Map<string, string>();

  take(slot: SocketSlot, max: number): boolean {
    const held = this.perAccount.get(slot.accountId) ?? 0;
    if (held >= max) return false;
    this.perAccount.set(slot.accountId, held + 1);
    this.accountOf.set(slot.id, slot.accountId);
    return true;
  }

  release(id: string): void {
    const account = this.accountOf.get(id);
    if (account === undefined) return;
    this.accountOf.delete(id);
    const left = (this.perAccount.get(account) ?? 1) - 1;
    if (left > 0) this.perAccount.set(account, left);
    else this.perAccount.delete(account);
  }

  async close(): Promise<void> {
    this.perAccount.clear();
    this.accountOf.clear();
  }
}

/**
 * The slots of every node in one database table: an account's limit holds across the cluster.
 * This node renews its slots every third of `leaseMs`; a node that dies stops renewing, and its
 * slots are free `leaseMs` after the last renewal. The node's own count is checked first (no
 * database round trip when this node alone fills the account's slots), and is what still bounds
 * an account while the database cannot answer: then the socket is let in and the error reported.
 */
export class SharedSocketSlots implements SocketSlotStore {
  private readonly local = new InProcessSocketSlots();
  /** Slots of this node in the table. */
  private readonly inTable = new Set<string>();
  /** Slots whose release failed: retried at the next renewal (until then, renewal keeps them). */
  private readonly unreleased = new Set<string>();
  /** Takes and releases under way: close() waits for them, so none writes after it. */
  private readonly pending = new Set<Promise<unknown>>();
  private readonly renewer: NodeJS.Timeout;
  private renewing = false;
  private closed = false;

  constructor(
    private readonly table: Pick<SocketSlotRepository, 'take' | 'release' | 'renew' | 'releaseNode'>,
    private readonly node: string,
    private readonly leaseMs: number,
    private readonly onError: (err: unknown) => void,
  ) {
    this.renewer = setInterval(() => void this.renew(), Math.max(1, Math.floor(leaseMs / 3)));
    this.renewer.unref();
  }

  async take(slot: SocketSlot, max: number): Promise<boolean> {
    if (this.closed || !this.local.take(slot, max)) return false;
    try {
      if (!(await this.track(this.table.take(slot, this.node, max, this.leaseMs)))) {
        this.local.release(slot.id);
        return false;
      }
      this.inTable.add(slot.id);
    } catch (err) {
      this.onError(err);
    }
    return true;
  }

  release(id: string): void {
    this.local.release(id);
    if (!this.inTable.delete(id) || this.closed) return;
    this.track(this.table.release(id)).catch((err: unknown) => {
      this.unreleased.add(id);
      this.onError(err);
    });
  }

  private track<T>(work: Promise<T>): Promise<T> {
    const settled: Promise<unknown> = work.then(
      () => this.pending.delete(settled),
      () => this.pending.delete(settled),
    );
    this.pending.add(settled);
    return work;
  }

  private async renew(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      for (const id of this.unreleased) {
        await this.table.release(id);
        this.unreleased.delete(id);
      }
      const held = this.inTable.size;
      const renewed = await this.table.renew(this.node, this.leaseMs);
      // Another node swept them: this one did not renew for a whole lease (a stalled event loop, a lost database).
      if (renewed < held) throw new Error(`${held - renewed} of this node's ${held} socket slots expired before renewal; they no longer count`);
    } catch (err) {
      this.onError(err);
    } finally {
      this.renewing = false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewer);
    await Promise.all(this.pending);
    try {
      await this.table.releaseNode(this.node);
    } catch (err) {
      this.onError(err);
    }
    await this.local.close();
  }
}
