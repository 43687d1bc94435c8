import { describe, expect, it } from 'vitest';
import { calibrationSpec, modelFigures, type CalibrationFigures } from '../../../bench/sim/calibration.js';
import { realCoreFigures, runRealCore } from '../../support/real-core-world.js';

/**
 * Issue #11: the scale model (bench/sim, the attention design) stays honest. One small mixed workload —
 * basic stores sending lone tasks, pro stores and an enterprise store sending bursts deep enough to fan
 * out — runs through the real core (ingest, handleAttention → runSlice, in-memory ports, simulated time,
 * the model's own latencies) and through the model; requests, slices and worker time per task must
 * agree within 10%.
 */
const FIGURES: (keyof Omit<CalibrationFigures, 'tasks'>)[] = [
  'requestsPerTask',
  'slicesPerTask',
  'workerSecondsPerTask',
];

describe.each([
  { seed: 5, workers: 4, batchSize: 10 },
  { seed: 6, workers: 2, batchSize: 10 },
  { seed: 5, workers: 4, batchSize: 1 },
])(
  'scale model calibration against the real core (seed $seed, $workers workers, batches of $batchSize)',
  ({ seed, workers, batchSize }) => {
    it('agrees within 10% on requests, slices and worker-seconds per task', async () => {
      const spec = { ...calibrationSpec(seed), workers, batchSize };
      const real = realCoreFigures(await runRealCore(spec));
      const model = modelFigures(spec);
      expect(model.tasks).toBe(real.tasks);
      for (const figure of FIGURES) {
        const ratio = model[figure] / real[figure];
        expect(ratio, `${figure}: model ${model[figure]} vs real core ${real[figure]}`).toBeGreaterThan(0.9);
        expect(ratio, `${figure}: model ${model[figure]} vs real core ${real[figure]}`).toBeLessThan(1.1);
      }
    });
  },
);
