// Renders the JSON Schema subset zod 4's z.toJSONSchema emits as TypeScript declarations: objects
// (required, optional, records), arrays, primitives, enum/const, anyOf/oneOf/allOf, null and
// $ref into $defs. Anything else becomes `unknown` rather than a guess. Validation keywords
// (patterns, lengths, bounds) have no TypeScript counterpart and are left out.

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  description?: string;
  default?: unknown;
}

/** A declaration to emit: its name, its schema, and what it documents. */
export interface NamedSchema {
  name: string;
  schema: JsonSchema;
  description: string;
}

const WIDTH = 110;
const INDENT = '  ';

const literal = (value: unknown): string =>
  typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(value);

const propertyKey = (name: string): string => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : literal(name));

/** A JSDoc block at `indent`, wrapped to WIDTH; empty when there is nothing to say. */
export function jsDoc(lines: readonly string[], indent: string): string {
  const text = lines.filter((line) => line !== '').map((line) => line.replace(/\*\//g, '*\\/'));
  if (text.length === 0) return '';
  const oneLine = `${indent}/** ${text.join(' ')} */`;
  if (text.length === 1 && oneLine.length <= WIDTH) return `${oneLine}\n`;
  const wrapped = text.flatMap((line) => wrap(line, WIDTH - indent.length - 3));
  return `${indent}/**\n${wrapped.map((line) => `${indent} * ${line}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  return [...lines, line];
}

const docOf = (schema: JsonSchema): string[] => [
  schema.description ?? '',
  schema.default === undefined ? '' : `@default ${JSON.stringify(schema.default)}`,
];

const stripDefs = ({ $defs: _defs, ...rest }: JsonSchema): JsonSchema => rest;

/**
 * Emits declarations for `named`, in order. A `$ref` whose target is structurally one of the named
 * declarations is written as that name; any other is inlined.
 */
export function emitDeclarations(named: readonly NamedSchema[]): string {
  const roots = named.map(({ name, schema }) => ({ name, key: JSON.stringify(stripDefs(resolveRoot(schema))) }));
  const nameOf = (def: JsonSchema): string | undefined => roots.find((root) => root.key === JSON.stringify(stripDefs(def)))?.name;

  return named
    .map(({ name, schema, description }) => {
      const root = resolveRoot(schema);
      const emitter = new Emitter(schema.$defs ?? {}, nameOf);
      const doc = jsDoc([description, root.description && root.description !== description ? root.description : ''], '');
      if (isPlainObject(root)) return `${doc}export interface ${name} ${emitter.objectBody(root, '')}\n`;
      return `${doc}export type ${name} = ${emitter.type(root, '')};\n`;
    })
    .join('\n');
}

/** zod writes a schema with an id as `{ $ref: '#/$defs/Id', $defs }`: the declaration is the def itself. */
function resolveRoot(schema: JsonSchema): JsonSchema {
  const { $ref, $defs, $schema: _schema, ...rest } = schema as JsonSchema & { $schema?: string };
  if ($ref !== undefined && Object.keys(rest).length === 0) return { ...defTarget($ref, $defs ?? {}), $defs };
  return { ...rest, $defs, ...($ref === undefined ? {} : { $ref }) };
}

function defTarget(ref: string, defs: Record<string, JsonSchema>): JsonSchema {
  const match = /^#\/\$defs\/(.+)$/.exec(ref);
  const target = match ? defs[match[1]!] : undefined;
  if (!target) throw new Error(`Cannot resolve ${ref}`);
  return target;
}

const isPlainObject = (schema: JsonSchema): boolean =>
  schema.type === 'object' && schema.properties !== undefined && schema.anyOf === undefined && schema.oneOf === undefined;

class Emitter {
  constructor(
    private readonly defs: Record<string, JsonSchema>,
    private readonly nameOf: (def: JsonSchema) => string | undefined,
  ) {}

  type(schema: JsonSchema, indent: string): string {
    if (schema.$ref !== undefined) {
      const target = defTarget(schema.$ref, this.defs);
      return this.nameOf(target) ?? this.type(target, indent);
    }
    if (schema.const !== undefined) return literal(schema.const);
    if (schema.enum !== undefined) return union(schema.enum.map(literal));
    const members = schema.anyOf ?? schema.oneOf;
    if (members !== undefined) return union(members.map((member) => this.type(member, indent)));
    if (schema.allOf !== undefined) return schema.allOf.map((part) => wrapUnion(this.type(part, indent))).join(' & ');
    if (Array.isArray(schema.type)) return union(schema.type.map((type) => this.type({ ...schema, type }, indent)));
    switch (schema.type) {
      case 'string':
        return 'string';
      case 'number':
      case 'integer':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array':
        if (schema.prefixItems !== undefined) return `[${schema.prefixItems.map((item) => this.type(item, indent)).join(', ')}]`;
        return `${wrapUnion(schema.items ? this.type(schema.items, indent) : 'unknown')}[]`;
      case 'object':
        if (schema.properties !== undefined) return this.objectBody(schema, indent);
        return `Record<string, ${this.additional(schema, indent) ?? 'unknown'}>`;
      default:
        return 'unknown';
    }
  }

  objectBody(schema: JsonSchema, indent: string): string {
    const inner = indent + INDENT;
    const required = new Set(schema.required ?? []);
    const members = Object.entries(schema.properties ?? {}).map(
      ([name, property]) =>
        `${jsDoc(docOf(property), inner)}${inner}${propertyKey(name)}${required.has(name) ? '' : '?'}: ${this.type(property, inner)};`,
    );
    const rest = this.additional(schema, inner);
    if (rest !== undefined) members.push(`${inner}[key: string]: ${rest};`);
    return `{\n${members.join('\n')}\n${indent}}`;
  }

  /** The type of properties beyond the listed ones, when the schema allows them. */
  private additional(schema: JsonSchema, indent: string): string | undefined {
    const extra = schema.additionalProperties;
    // Listed properties and no schema for the rest: zod's types leave the rest out (strip, loose).
    if (typeof extra !== 'object') return schema.properties === undefined && extra !== false ? 'unknown' : undefined;
    return this.type(extra, indent);
  }
}

const union = (types: readonly string[]): string => [...new Set(types)].join(' | ');
/** Parenthesises a union or intersection where it is an operand (`(A | B)[]`). */
const wrapUnion = (type: string): string => (hasTopLevel(type, '|') || hasTopLevel(type, '&') ? `(${type})` : type);

function hasTopLevel(type: string, operator: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < type.length; i++) {
    const char = type[i];
    if (quoted) quoted = char !== "'" || type[i - 1] === '\\';
    else if (char === "'") quoted = true;
    else if (type.startsWith('/*', i))
      i = type.indexOf('*/', i) + 1; // JSDoc inside object members
    else if ('{[(<'.includes(char!)) depth++;
    else if ('}])>'.includes(char!)) depth--;
    else if (char === operator && depth === 0) return true;
  }
  return false;
}
