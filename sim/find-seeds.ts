/**
 * `npx tsx sim/find-seeds.ts <variant> [--from S] [--want N] [--upto U]`: the first N seeds from S (to U) where the
 * variant is rejected for the invariant it breaks and the protocol as built is clean — what RARE_VARIANTS needs
 * when a change moves a rare variant's interleavings.
 */
import { variantByName } from './variants.js';
import { runSeed, type Variant } from './world.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const variant = variantByName(args[0] ?? '');
if (!variant) throw new Error(`no variant ${args[0]}`);
const asBuilt = variantByName('as-built') as Variant;
const want = option('want', 2);
const found: number[] = [];
for (let seed = option('from', 1); seed <= option('upto', 50_000) && found.length < want; seed++) {
  const broken = await runSeed(seed, variant);
  if (broken.violation?.invariant !== variant.breaks) continue;
  if ((await runSeed(seed, asBuilt)).ok) {
    found.push(seed);
    console.log(`${variant.name}: seed ${seed}`);
  }
}
console.log(JSON.stringify({ variant: variant.name, found }));
