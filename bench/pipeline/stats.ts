/** Small statistics helpers for the benchmark (nearest-rank percentiles, Jain's fairness index). */
export const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
};

/** Jain's index: (Σx)² / (n · Σx²); 1 when every share is equal, 1/n when one takes everything. */
export const jainIndex = (shares: number[]): number => {
  if (shares.length === 0) return NaN;
  const sum = shares.reduce((a, b) => a + b, 0);
  const squares = shares.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (shares.length * squares);
};

export const round = (value: number, digits = 1): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};
