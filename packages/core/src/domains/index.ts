// Custom domains' DNS proofs: TXT lookups, and the checks that keep a verified domain verified.
export * from './txt-lookup.js';
export * from './domain-checks.js';
