import { describe, expect, it } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import { balanceLevels, CAP_DRAIN_MS } from '../../../lambdas/core/level-balance.js';
import type { LevelLoad } from '../../../lambdas/core/level-caps.js';
import { LEVEL_CAPS_STATE_ID, MetricNames } from '../../../lambdas/core/names.js';
import type { StorePriority } from '../../../lambdas/core/plans.js';
import type { LevelSources } from '../../../lambdas/core/ports.js';
import { workerTimeoutSeconds } from '../../../lambdas/core/timing.js';

const FLOORS = { high: 10, normal: 6, low: 4 };
const NOW = 1_000_000;
const idle: LevelLoad = { waiting: 0, inFlight: 0 };

const world = (opts: {
  caps?: Partial<Record<StorePriority, number>>;
  loads?: Partial<Record<StorePriority, LevelLoad>>;
  state?: unknown;
  failSet?: StorePriority;
  now?: number;
}) => {
  const caps: Record<StorePriority, number> = { ...FLOORS, ...opts.caps };
  const calls: string[] = [];
  const stored = new Map<string, string>();
  if (opts.state !== undefined)
    stored.set(LEVEL_CAPS_STATE_ID, typeof opts.state === 'string' ? opts.state : JSON.stringify(opts.state));
  const sources: LevelSources = {
    load: async (level) => ({ ...idle, ...opts.loads?.[level] }),
    cap: async (level) => caps[level],
    setCap: async (level, cap) => {
      calls.push(`set ${level}=${cap}`);
      if (opts.failSet === level) throw new Error('ResourceInUseException');
      caps[level] = cap;
    },
  };
  const telemetry = new RecordingTelemetry();
  const deps = {
    sources,
    state: {
      readCursor: async (id: string) => stored.get(id),
      writeCursor: async (id: string, text: string | undefined) => {
        calls.push('write state');
        if (text === undefined) stored.delete(id);
        else stored.set(id, text);
      },
    },
    floors: FLOORS,
    clock: { now: () => opts.now ?? NOW, sleep: async () => undefined },
    telemetry,
  };
  const state = () =>
    JSON.parse(stored.get(LEVEL_CAPS_STATE_ID) ?? 'null') as {
      held: { level: string; cap: number; until: number }[];
      caps: Record<StorePriority, number>;
      frozenUntil?: number;
    };
  return { deps, caps, calls, state, telemetry };
};

describe('balanceLevels', () => {
  it('holds a lowered cap for the worker timeout, a minute of update lag and 30 s of calls', () => {
    expect(CAP_DRAIN_MS).toBe(workerTimeoutSeconds() * 1000 + 60_000 + 30_000);
  });

  it('lends a lone waiting level the idle floors, counts its loan and logs the change', async () => {
    const w = world({ loads: { low: { waiting: 30, inFlight: 4 } } });
    const report = await balanceLevels(w.deps);
    expect(w.calls).toEqual(['write state', 'set low=20', 'write state']);
    expect(report.caps).toEqual({ high: 10, normal: 6, low: 20 });
    expect(w.state()).toEqual({ held: [], caps: { high: 10, normal: 6, low: 20 } });
    expect(w.telemetry.counters.get(`${MetricNames.levelLoan}{level=low}`)).toBe(16);
    expect(w.telemetry.counters.get(`${MetricNames.levelLoan}{level=high}`)).toBe(0);
  });

  it('writes nothing and sets nothing when the caps are already right', async () => {
    const w = world({ state: { held: [], caps: FLOORS } });
    await balanceLevels(w.deps);
    expect(w.calls).toEqual([]);
  });

  it('writes a lowered cap down before lowering it, held for CAP_DRAIN_MS', async () => {
    const w = world({ caps: { low: 20 }, state: { held: [], caps: { ...FLOORS, low: 20 } } });
    await balanceLevels(w.deps);
    expect(w.calls).toEqual(['write state', 'set low=4']);
    expect(w.state().held).toEqual([{ level: 'low', cap: 20, until: NOW + CAP_DRAIN_MS }]);
  });

  it('keeps the hold when the lowering call fails (it may have taken effect)', async () => {
    const w = world({ caps: { low: 20 }, failSet: 'low', state: { held: [], caps: { ...FLOORS, low: 20 } } });
    await expect(balanceLevels(w.deps)).rejects.toThrow('ResourceInUseException');
    expect(w.state().held).toEqual([{ level: 'low', cap: 20, until: NOW + CAP_DRAIN_MS }]);
  });

  it('raises only within what the held caps leave of the reservation, high first; the rest a run later', async () => {
    // low was lent 16 until just now; its workers may still run. high and normal now wait, low is idle.
    const held = [{ level: 'low', cap: 20, until: NOW + 1 }];
    const busy = { waiting: 9, inFlight: 0 };
    const w = world({ state: { held, caps: FLOORS }, loads: { high: busy, normal: busy } });
    const report = await balanceLevels(w.deps);
    expect(report.planned).toEqual({ high: 13, normal: 7, low: 4 });
    // Bound: high 10 + normal 6 + low 20 = 36 = RESERVED: no room at all.
    expect(report.caps).toEqual(FLOORS);
    expect(w.calls).toEqual([]);

    const later = world({ state: { held, caps: FLOORS }, loads: { high: busy, normal: busy }, now: NOW + 1 });
    expect((await balanceLevels(later.deps)).caps).toEqual({ high: 13, normal: 7, low: 4 });
    expect(later.calls).toEqual(['write state', 'set high=13', 'set normal=7', 'write state']);
    expect(later.state().held).toEqual([]);
  });

  it('raises high before the others when the room is short', async () => {
    const held = [{ level: 'low', cap: 4 + 15, until: NOW + 1 }];
    const busy = { waiting: 9, inFlight: 0 };
    const w = world({ state: { held, caps: FLOORS }, loads: { high: busy, normal: busy } });
    // Bound 10 + 6 + 19 = 35: one worker of room, to high.
    expect((await balanceLevels(w.deps)).caps).toEqual({ high: 11, normal: 6, low: 4 });
    expect(w.calls).toEqual(['set high=11', 'write state']);
  });

  it('holds a cap a deploy lowered since the last run, at what the run left, and raises nothing over it', async () => {
    const w = world({
      caps: { high: 10 },
      state: { held: [], caps: { ...FLOORS, high: 26 } },
      loads: { low: { waiting: 5, inFlight: 0 } },
    });
    // Bound: high 26 + normal 6 + low 4 = 36: low's loan waits.
    expect((await balanceLevels(w.deps)).caps).toEqual(FLOORS);
    expect(w.state().held).toEqual([{ level: 'high', cap: 26, until: NOW + CAP_DRAIN_MS }]);
  });

  it('a raise that fails after a lowering leaves the lowered cap held and the raise for a later run', async () => {
    const w = world({
      caps: { low: 20 },
      state: { held: [{ level: 'normal', cap: 2, until: NOW + 1 }], caps: { ...FLOORS, low: 20 } },
      loads: { high: { waiting: 5, inFlight: 0 } },
      failSet: 'high',
    });
    await expect(balanceLevels({ ...w.deps, drainMs: 0 })).rejects.toThrow('ResourceInUseException');
    expect(w.caps).toEqual(FLOORS);
    expect(w.state().caps).toEqual(FLOORS);
  });

  it('logs the caps only when a run changed them', async () => {
    const quiet = world({ state: { held: [], caps: FLOORS } });
    const quietLog: string[] = [];
    quiet.deps.telemetry.info = (message: string) => void quietLog.push(message);
    await balanceLevels(quiet.deps);
    expect(quietLog).toEqual([]);
    const changed = world({ loads: { low: { waiting: 30, inFlight: 0 } } });
    const logged: unknown[] = [];
    changed.deps.telemetry.info = (message: string, fields?: unknown) => void logged.push([message, fields]);
    await balanceLevels(changed.deps);
    expect(logged).toEqual([
      [
        'level caps',
        {
          caps: { high: 10, normal: 6, low: 20 },
          planned: { high: 10, normal: 6, low: 20 },
          loads: { high: idle, normal: idle, low: { waiting: 30, inFlight: 0 } },
          floors: FLOORS,
        },
      ],
    ]);
  });

  it('with loans off, brings a loaned cap back to its floor and lends nothing', async () => {
    const w = world({
      caps: { low: 20 },
      state: { held: [], caps: { ...FLOORS, low: 20 } },
      loads: { low: { waiting: 50, inFlight: 20 } },
    });
    expect((await balanceLevels({ ...w.deps, loans: false })).caps).toEqual(FLOORS);
    expect(w.calls).toEqual(['write state', 'set low=4']);
  });

  it('drops holds that have run out', async () => {
    const w = world({ state: { held: [{ level: 'low', cap: 20, until: NOW }], caps: FLOORS } });
    await balanceLevels(w.deps);
    expect(w.state()).toEqual({ held: [], caps: FLOORS });
  });

  it('after an unreadable state, raises nothing until CAP_DRAIN_MS has passed, and warns', async () => {
    const busy = { loads: { low: { waiting: 30, inFlight: 0 } } };
    const w = world({ ...busy, state: '{not json' });
    const warned: unknown[] = [];
    w.deps.telemetry.warn = (message: string, fields?: unknown) => void warned.push([message, fields]);
    expect((await balanceLevels(w.deps)).caps).toEqual(FLOORS);
    expect(warned).toEqual([
      [
        'level caps state unreadable: no raise until it has drained',
        { error: expect.stringContaining('JSON') as unknown },
      ],
    ]);
    const frozen = w.state();
    expect(frozen.frozenUntil).toBe(NOW + CAP_DRAIN_MS);

    const still = world({ ...busy, state: frozen, now: NOW + CAP_DRAIN_MS - 1 });
    expect((await balanceLevels(still.deps)).caps).toEqual(FLOORS);
    const after = world({ ...busy, state: frozen, now: NOW + CAP_DRAIN_MS });
    expect((await balanceLevels(after.deps)).caps.low).toBe(20);
    expect(after.state()).not.toHaveProperty('frozenUntil');
  });

  it('treats a state of the wrong shape as unreadable', async () => {
    const w = world({ state: { held: [{ level: 'urgent', cap: 1, until: 0 }] } });
    await balanceLevels(w.deps);
    expect(w.state().frozenUntil).toBe(NOW + CAP_DRAIN_MS);
  });

  it('the simulation’s broken no-drain-hold: a lowered cap held for 0 ms does not count', async () => {
    const w = world({
      caps: { low: 20 },
      state: { held: [], caps: { ...FLOORS, low: 20 } },
      loads: { high: { waiting: 5, inFlight: 0 } },
    });
    expect((await balanceLevels({ ...w.deps, drainMs: 0 })).caps).toEqual({ high: 20, normal: 6, low: 4 });
    // The real one: low's 20 still counts, so high waits for the next run.
    const held = world({
      caps: { low: 20 },
      state: { held: [], caps: { ...FLOORS, low: 20 } },
      loads: { high: { waiting: 5, inFlight: 0 } },
    });
    expect((await balanceLevels(held.deps)).caps).toEqual(FLOORS);
  });
});
