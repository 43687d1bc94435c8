import type { DeadLetterLedger, DeadLetterTally } from '../../lambdas/core/dead-letter-audit.js';

/** The dead-letter tallies in memory, with the order of calls for tests that check it. */
export class MemoryDeadLetterLedger implements DeadLetterLedger {
  readonly tallies = new Map<string, DeadLetterTally>();
  readonly calls: string[] = [];

  async noteWritten(storeId: string, now: number): Promise<void> {
    this.calls.push(`noteWritten ${storeId}`);
    const tally = this.tallies.get(storeId) ?? { written: 0 };
    this.tallies.set(storeId, { ...tally, written: tally.written + 1, writtenAt: now });
  }

  async read(storeId: string): Promise<DeadLetterTally | undefined> {
    this.calls.push(`read ${storeId}`);
    const tally = this.tallies.get(storeId);
    return tally && { ...tally };
  }

  async settle(storeId: string, seenDepth: number, seenWritten: number): Promise<void> {
    this.calls.push(`settle ${storeId}`);
    const tally = this.tallies.get(storeId) ?? { written: 0 };
    this.tallies.set(storeId, { ...tally, seenDepth, seenWritten });
  }

  async markOldest(storeId: string, oldestAt: number): Promise<void> {
    this.calls.push(`markOldest ${storeId} ${oldestAt}`);
    const tally = this.tallies.get(storeId) ?? { written: 0 };
    this.tallies.set(storeId, { ...tally, oldestAt });
  }
}
