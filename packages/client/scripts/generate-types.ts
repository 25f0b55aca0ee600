// Writes src/generated/wire-types.ts from the zod schemas of @deeplink/core:
// `npm run generate -w packages/client` (the build runs it first).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GENERATED_PATH, generateWireTypes } from './wire-types.js';

const target = fileURLToPath(new URL(`../${GENERATED_PATH}`, import.meta.url));
writeFileSync(target, generateWireTypes());
console.log(`wrote ${GENERATED_PATH}`);
