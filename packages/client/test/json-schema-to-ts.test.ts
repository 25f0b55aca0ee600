// The emitter behind src/generated/wire-types.ts, on the JSON Schema shapes zod emits.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { emitDeclarations, type JsonSchema } from '../scripts/json-schema-to-ts.js';

const emit = (name: string, schema: JsonSchema, description = '') => emitDeclarations([{ name, schema, description }]);
const fromZod = (schema: z.ZodType, io: 'input' | 'output' = 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;

describe('emitDeclarations', () => {
  it('writes an object as an interface: required and optional fields, descriptions and defaults as JSDoc', () => {
    const schema = z.object({
      id: z.string(),
      size: z.number().int().default(4).meta({ description: 'Width in pixels' }),
      'content-type': z.string().optional(),
    });
    expect(emit('Image', fromZod(schema, 'input'), 'An image.')).toBe(
      [
        '/** An image. */',
        'export interface Image {',
        '  id: string;',
        '  /**',
        '   * Width in pixels',
        '   * @default 4',
        '   */',
        '  size?: number;',
        "  'content-type'?: string;",
        '}',
        '',
      ].join('\n'),
    );
  });

  it('parenthesises unions inside arrays and keeps null, consts and enums as literals', () => {
    const schema = z.object({
      values: z.array(z.union([z.string(), z.number()])),
      state: z.enum(['on', "it's off"]).nullable(),
      kind: z.literal('TXT'),
    });
    expect(emit('Mixed', fromZod(schema))).toContain(
      "  values: (string | number)[];\n  state: 'on' | 'it\\'s off' | null;\n  kind: 'TXT';",
    );
  });

  it('writes records, and an index signature beside listed fields', () => {
    expect(emit('Counts', fromZod(z.record(z.string(), z.number())))).toBe('export type Counts = Record<string, number>;\n');
    const loose = fromZod(z.object({ total: z.number() }).catchall(z.string()));
    expect(emit('Row', loose)).toContain('  total: number;\n  [key: string]: string;\n}');
  });

  it('names a $ref whose target is a declared type, and inlines any other', () => {
    const point = z.object({ x: z.number() }).meta({ id: 'EmitterPoint' });
    const line = z.object({ from: point, to: point });
    const declared = emitDeclarations([
      { name: 'Point', schema: fromZod(point), description: '' },
      { name: 'Line', schema: fromZod(line), description: '' },
    ]);
    expect(declared).toContain('export interface Line {\n  from: Point;\n  to: Point;\n}');
    expect(emit('Line', fromZod(line))).toContain('  from: {\n    x: number;\n  };');
  });

  it('writes a union of objects as a type alias, and an unrepresentable schema as unknown', () => {
    const union = z.discriminatedUnion('kind', [z.object({ kind: z.literal('a') }), z.object({ kind: z.literal('b'), n: z.number() })]);
    expect(emit('Either', fromZod(union))).toBe("export type Either = {\n  kind: 'a';\n} | {\n  kind: 'b';\n  n: number;\n};\n");
    expect(emit('Anything', fromZod(z.custom<Date>(() => true)))).toBe('export type Anything = unknown;\n');
  });

  it('keeps a description from closing its comment early', () => {
    expect(emit('Note', fromZod(z.object({ text: z.string().meta({ description: 'ends */ here' }) })))).toContain('/** ends *\\/ here */');
  });
});
