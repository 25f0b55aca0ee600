export * from './outbound-fetch.js';
export * from './public-address.js';
