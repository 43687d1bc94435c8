/**
 * ISO 4217 currency codes a `price.update` may carry (contract: "currency: ISO-4217 string"). The runtime's ICU
 * list (`Intl.supportedValuesOf`, ~160 circulating currencies) lacks the standard's fund codes, precious metals,
 * bond-market units and test codes, which are ISO 4217 as well: those are added here. Read from ICU rather than
 * written out, so a currency the standard adds reaches ingest with the runtime's update; ICU also keeps a few
 * recently withdrawn codes (e.g. HRK), which ingest takes, being lenient there.
 */
const NOT_IN_ICU =
  'BOV CHE CHW CLF COU MXV USN UYI UYW VED XAG XAU XBA XBB XBC XBD XPD XPT XTS XUA XXX'.split(' ');

/** Sorted, so the OpenAPI document lists them in order. */
export const ISO_4217_CODES = [...new Set([...Intl.supportedValuesOf('currency'), ...NOT_IN_ICU])].sort() as [
  string,
  ...string[],
];
