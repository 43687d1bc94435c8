import { Token } from 'aws-cdk-lib';
import { QUEUE_PREFIX_PATTERN } from '../lambdas/core/names.js';

/**
 * Prop checks run before any resource is created, so a bad value fails synth with a message that
 * names the prop, instead of failing a deployment half-way or a Lambda at cold start.
 */
export class InvalidPropError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPropError';
  }
}

const requireLiteral = (name: string, value: string | number): void => {
  // A token (e.g. a CfnParameter) cannot be checked at synth time; these values shape IAM and env at synth.
  if (Token.isUnresolved(value)) throw new InvalidPropError(`${name} must be a literal value, not a token`);
};

export const requireQueuePrefix = (name: string, prefix: string): string => {
  requireLiteral(name, prefix);
  if (!QUEUE_PREFIX_PATTERN.test(prefix)) {
    throw new InvalidPropError(
      `${name} must match ${String(QUEUE_PREFIX_PATTERN)} (lowercase letters and digits, starting with a letter, at most 16 characters); got '${prefix}'`,
    );
  }
  return prefix;
};

/** Tasks carry tenant data: the marketplace is only ever called over TLS, and the URL must not embed credentials. */
export const requireHttpsUrl = (name: string, value: string): string => {
  requireLiteral(name, value);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidPropError(`${name} must be an absolute https URL; got '${value}'`);
  }
  if (url.protocol !== 'https:') throw new InvalidPropError(`${name} must use https; got '${value}'`);
  if (url.username !== '' || url.password !== '') {
    throw new InvalidPropError(
      `${name} must not contain credentials (Lambda environment variables are readable)`,
    );
  }
  if (url.search !== '' || url.hash !== '') {
    throw new InvalidPropError(`${name} must be a base URL without query or fragment; got '${value}'`);
  }
  return value;
};

export const requireIntegerInRange = (name: string, value: number, min: number, max: number): number => {
  requireLiteral(name, value);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidPropError(`${name} must be an integer between ${min} and ${max}; got ${value}`);
  }
  return value;
};

export const requirePositiveNumber = (name: string, value: number): number => {
  requireLiteral(name, value);
  if (!Number.isFinite(value) || value <= 0)
    throw new InvalidPropError(`${name} must be a positive number; got ${value}`);
  return value;
};
