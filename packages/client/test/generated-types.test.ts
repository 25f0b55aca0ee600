// src/generated/wire-types.ts is committed (the published declarations need it without the core);
// this fails when it no longer matches the schemas it is generated from.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENERATED_PATH, generateWireTypes } from '../scripts/wire-types.js';

describe('the generated wire types', () => {
  it('match the zod schemas of @deeplink/core', async () => {
    const committed = await readFile(join(import.meta.dirname, '..', GENERATED_PATH), 'utf8');
    expect(committed === generateWireTypes(), `${GENERATED_PATH} is stale: run \`npm run generate -w packages/client\``).toBe(true);
  });

  it('import nothing, so the published declarations need neither the core nor zod', () => {
    expect(generateWireTypes()).not.toMatch(/^\s*(import|export .* from)\b/m);
  });
});
