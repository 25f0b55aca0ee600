import { createHash } from 'node:crypto';

/** An A/B test's variant: where its share of visitors goes. Weights are percentages summing to 100. */
export interface Variant<Destination> {
  weight: number;
  destination: Destination;
}

/** A test has 2 to 4 variants, each with at least this share: a smaller one would take months to read. */
export const VARIANTS_MIN = 2;
export const VARIANTS_MAX = 4;
export const VARIANT_WEIGHT_MIN = 10;

/** The points a visitor's place is chosen among: weights are whole percentages, so 10,000 gives every split exactly. */
const PLACES = 10_000;

/**
 * Where a visitor falls in a test, from 0 to PLACES - 1: the same visitor (the redirector's daily
 * visitor hash) on the same link always falls in the same place, and two links' tests split the
 * same visitors independently. SHA-256 rather than a fast hash: its bits are uniform whatever the
 * input, and it is computed only for links that run a test.
 */
export function visitorPlace(linkId: string, visitorHash: string): number {
  const digest = createHash('sha256').update(linkId).update('\0').update(visitorHash).digest();
  return digest.readUInt32BE(0) % PLACES;
}

/** The variant a place falls in: variants take consecutive ranges of places, in their order, by weight. */
export function variantAt<Destination>(variants: readonly Variant<Destination>[], place: number): number {
  let end = 0;
  for (const [index, variant] of variants.entries()) {
    end += (variant.weight / 100) * PLACES;
    if (place < end) return index;
  }
  return variants.length - 1;
}

/** The standard normal distribution's cumulative function (Zelen and Severo's approximation, error below 1e-7). */
export function normalCdf(z: number): number {
  const t = 1 / (1 + 0.2316419 * Math.abs(z));
  const density = Math.exp((-z * z) / 2) / Math.sqrt(2 * Math.PI);
  const tail = density * t * (0.31938153 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
  return z >= 0 ? 1 - tail : tail;
}

/** One variant's results: visitors sent to it, and how many of them converted (an app event). */
export interface VariantResult {
  clicks: number;
  conversions: number;
}

/**
 * The two-proportion z-test of two variants' conversion rates, with the pooled standard error:
 * the z score and the two-sided p-value. With no clicks on a side, or no spread at all, there is
 * nothing to tell apart: z 0, p 1.
 */
export function twoProportionTest(a: VariantResult, b: VariantResult): { z: number; pValue: number } {
  if (a.clicks === 0 || b.clicks === 0) return { z: 0, pValue: 1 };
  const pooled = (a.conversions + b.conversions) / (a.clicks + b.clicks);
  const standardError = Math.sqrt(pooled * (1 - pooled) * (1 / a.clicks + 1 / b.clicks));
  if (standardError === 0) return { z: 0, pValue: 1 };
  const z = (a.conversions / a.clicks - b.conversions / b.clicks) / standardError;
  return { z, pValue: 2 * (1 - normalCdf(Math.abs(z))) };
}

/**
 * The variant that has won, if any: the one with the best conversion rate, when it beats every
 * other variant at `significance` (a p-value threshold such as 0.05) and every variant has had
 * `minimumClicks`. Comparing the leader with each other variant (rather than all pairs) is what
 * a decision needs; with up to 4 variants the owner's threshold is divided among the comparisons
 * (Bonferroni), so three looks do not make a false winner three times as likely.
 */
export function decideWinner(
  results: readonly VariantResult[],
  { significance, minimumClicks }: { significance: number; minimumClicks: number },
): { winner: number; pValues: number[] } | undefined {
  if (results.length < 2 || results.some((result) => result.clicks < minimumClicks)) return undefined;
  const rate = (result: VariantResult) => result.conversions / result.clicks;
  const leader = results.reduce((best, result, index) => (rate(result) > rate(results[best]!) ? index : best), 0);
  const threshold = significance / (results.length - 1);
  const pValues = results.map((result, index) => (index === leader ? 0 : twoProportionTest(results[leader]!, result).pValue));
  const beatsAll = pValues.every((pValue, index) => index === leader || pValue < threshold);
  return beatsAll ? { winner: leader, pValues } : undefined;
}
