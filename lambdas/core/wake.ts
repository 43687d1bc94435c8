import type { DispatchState } from './ports.js';
import { WAKE_MARGIN_MS } from './timing.js';

/**
 * Write-ahead for messages hidden until `visibleAt` (on this worker's clock): no lease may mark the store
 * idle before they are surely visible again on any clock. Every such guard needs WAKE_MARGIN_MS (race A,
 * docs/ARCHITECTURE.md); it is added here, once, so no call site can forget it.
 */
export const guardUntilVisible = (
  dispatch: Pick<DispatchState, 'deferWake'>,
  storeId: string,
  visibleAt: number,
): Promise<void> => dispatch.deferWake(storeId, visibleAt + WAKE_MARGIN_MS);
