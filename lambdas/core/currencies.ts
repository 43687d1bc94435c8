/**
 * ISO 4217 currency codes a `price.update` may carry (contract: "currency: ISO-4217 string"): the standard's list
 * one (currencies, funds, precious metals, bond-market units, the test and "no currency" codes) as of 2026, and a
 * few codes withdrawn since 2023 that integrators still send (ANG, CUC, HRK, SLL, ZWL) — ingest is lenient there.
 * Written out rather than read from the runtime's ICU data (`Intl.supportedValuesOf`), which differs between
 * Node builds: the API Gateway request model is generated from this list at synth, and ingest checks it again on
 * the Lambda's Node and in local mode, so all three must be the same list. A unit test fails when the runtime's
 * ICU knows a code this list lacks (a currency the standard added): add it here.
 */
export const ISO_4217_CODES = (
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN ' +
  'BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD ' +
  'FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HRK HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS ' +
  'KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN ' +
  'MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR ' +
  'SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD ' +
  'USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU ' +
  'XTS XUA XXX YER ZAR ZMW ZWG ZWL'
).split(' ') as [string, ...string[]];
