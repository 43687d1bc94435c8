import { randomBytes } from 'node:crypto';
import type { Clock, IdGenerator } from '../core/ports.js';

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};

/** 72 random bits, URL-safe: slot ids only need to be unique within one store's few slots. */
export const randomIds: IdGenerator = { next: () => randomBytes(9).toString('base64url') };
