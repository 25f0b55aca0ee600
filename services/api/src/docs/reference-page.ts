/**
 * The API reference page (`/api/docs`): the OpenAPI document rendered once, on the server, as plain
 * semantic HTML. No script runs on it, so it needs nothing the pages' strict policy forbids, it
 * reads the same with a screen reader, a keyboard or a text browser, and it is searchable with the
 * browser's own find. The machine-readable document stays at /api/docs/json, for clients and tools
 * that try requests out.
 */

type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  description?: string;
  example?: unknown;
  examples?: unknown[];
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};

type Parameter = { name: string; in: string; required?: boolean; description?: string; schema?: Schema; example?: unknown };
type Content = Record<string, { schema?: Schema; example?: unknown }>;
type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { description?: string; required?: boolean; content?: Content };
  responses?: Record<string, { description?: string; content?: Content; headers?: Record<string, { description?: string }> }>;
};
type Document = {
  info: { title: string; version: string; description?: string };
  servers?: { url: string }[];
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema>; securitySchemes?: Record<string, { description?: string; type: string }> };
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;

/** Nested schemas are shown this deep; deeper ones (and every named one) are links to their own entry. */
const MAX_DEPTH = 4;

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** An id attribute's value from any text: letters, digits, '-' and '_' only. */
const anchor = (prefix: string, text: string) => `${prefix}-${text.replace(/[^A-Za-z0-9_-]+/g, '-')}`;

const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);
const json = (value: unknown) => escapeHtml(typeof value === 'string' ? value : JSON.stringify(value));

/** A schema's type in a few words: `string (uuid)`, `array of Link`, `integer`. */
function typeOf(schema: Schema): string {
  if (schema.$ref) return `<a href="#${anchor('schema', refName(schema.$ref))}">${escapeHtml(refName(schema.$ref))}</a>`;
  if (schema.const !== undefined) return `<code>${json(schema.const)}</code>`;
  if (schema.type === 'array' && schema.items) return `array of ${typeOf(schema.items)}`;
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.map(typeOf).join(' or ');
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? (schema.properties ? 'object' : 'any'));
  return escapeHtml(schema.format ? `${type} (${schema.format})` : type);
}

/** The limits and values a schema allows, as short phrases. */
function constraintsOf(schema: Schema): string[] {
  const said: string[] = [];
  if (schema.enum) said.push(`one of ${schema.enum.map((v) => `<code>${json(v)}</code>`).join(', ')}`);
  if (schema.minimum !== undefined) said.push(`at least ${schema.minimum}`);
  if (schema.maximum !== undefined) said.push(`at most ${schema.maximum}`);
  if (schema.minLength !== undefined && schema.minLength > 0) said.push(`at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) said.push(`at most ${schema.maxLength} characters`);
  if (schema.minItems !== undefined && schema.minItems > 0) said.push(`at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined) said.push(`at most ${schema.maxItems} items`);
  if (schema.pattern !== undefined) said.push(`matching <code>${escapeHtml(schema.pattern)}</code>`);
  if (schema.default !== undefined) said.push(`default <code>${json(schema.default)}</code>`);
  const example = schema.example ?? schema.examples?.[0];
  if (example !== undefined) said.push(`example <code>${json(example)}</code>`);
  return said;
}

/** What a schema describes, with its fields (nested ones up to MAX_DEPTH) as a list. */
function renderSchema(schema: Schema, depth = 0): string {
  const parts: string[] = [];
  if (schema.description) parts.push(`<p>${escapeHtml(schema.description)}</p>`);
  const constraints = constraintsOf(schema);
  if (constraints.length > 0) parts.push(`<p class="constraints">${constraints.join('; ')}</p>`);
  if (schema.$ref) return parts.join('');
  const object = schema.properties ? schema : schema.type === 'array' ? schema.items : undefined;
  if (object?.properties && depth < MAX_DEPTH) {
    const required = new Set(object.required ?? []);
    const fields = Object.entries(object.properties).map(
      ([name, field]) =>
        `<li><code class="field">${escapeHtml(name)}</code> <span class="type">${typeOf(field)}</span>` +
        `${required.has(name) ? ' <span class="required">required</span>' : ''}${renderSchema(field, depth + 1)}</li>`,
    );
    parts.push(`<ul class="fields">${fields.join('')}</ul>`);
  }
  for (const variant of schema.anyOf ?? schema.oneOf ?? []) {
    if (!variant.$ref && variant.properties && depth < MAX_DEPTH)
      parts.push(`<div class="variant">${renderSchema(variant, depth + 1)}</div>`);
  }
  return parts.join('');
}

/** A request's or response's bodies, one per media type. */
function renderContent(content: Content | undefined): string {
  if (!content) return '';
  return Object.entries(content)
    .map(
      ([type, { schema, example }]) =>
        `<p>As <code>${escapeHtml(type)}</code>${schema ? `: <span class="type">${typeOf(schema)}</span>` : ''}</p>` +
        (schema ? renderSchema(schema) : '') +
        (example === undefined ? '' : `<pre class="example"><code>${json(example)}</code></pre>`),
    )
    .join('');
}

function renderParameters(parameters: Parameter[], id: string, name: string): string {
  if (parameters.length === 0) return '';
  const rows = parameters.map(
    (p) =>
      `<tr><th scope="row"><code>${escapeHtml(p.name)}</code></th><td>${escapeHtml(p.in)}</td>` +
      `<td>${p.schema ? typeOf(p.schema) : ''}</td><td>${p.required ? 'yes' : 'no'}</td>` +
      `<td>${escapeHtml(p.description ?? p.schema?.description ?? '')}${
        p.schema ? ` ${constraintsOf({ ...p.schema, example: p.example ?? p.schema.example }).join('; ')}` : ''
      }</td></tr>`,
  );
  return (
    `<h4 id="${id}-parameters">Parameters</h4>` +
    // A region of its own, named after its operation, so that a keyboard can scroll a wide table.
    `<div class="scroll" role="region" aria-label="Parameters of ${escapeHtml(name)}" tabindex="0"><table><thead><tr>` +
    '<th scope="col">Name</th><th scope="col">In</th><th scope="col">Type</th><th scope="col">Required</th><th scope="col">About</th>' +
    `</tr></thead><tbody>${rows.join('')}</tbody></table></div>`
  );
}

function renderSecurity(security: Record<string, string[]>[] | undefined, schemes: Document['components']): string {
  if (!security || security.length === 0) return '<p class="auth">No authentication.</p>';
  const names = security.flatMap((requirement) => Object.keys(requirement));
  const described = names.map((name) => escapeHtml(schemes?.securitySchemes?.[name]?.description ?? name));
  return `<p class="auth">Authentication: ${described.join(', or ')}.</p>`;
}

function renderOperation(document: Document, path: string, method: string, operation: Operation): string {
  const id = anchor('op', operation.operationId ?? `${method}-${path}`);
  const responses = Object.entries(operation.responses ?? {}).map(
    ([status, response]) =>
      `<li><span class="status">${escapeHtml(status)}</span> ${escapeHtml(response.description ?? '')}` +
      `${renderContent(response.content)}</li>`,
  );
  const body = operation.requestBody;
  return (
    `<article id="${id}" aria-labelledby="${id}-title">` +
    `<h3 id="${id}-title"><span class="method">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>` +
    (operation.summary ? `<p class="summary">${escapeHtml(operation.summary)}</p>` : '') +
    (operation.description ? `<p>${escapeHtml(operation.description)}</p>` : '') +
    renderSecurity(operation.security ?? document.security, document.components) +
    renderParameters(operation.parameters ?? [], id, `${method.toUpperCase()} ${path}`) +
    (body
      ? `<h4>Request body${body.required ? '' : ' (optional)'}</h4>${body.description ? `<p>${escapeHtml(body.description)}</p>` : ''}${renderContent(body.content)}`
      : '') +
    (responses.length > 0 ? `<h4>Responses</h4><ul class="responses">${responses.join('')}</ul>` : '') +
    '</article>'
  );
}

/** The operations grouped by their first tag, in the document's order. */
function byTag(document: Document): Map<string, { path: string; method: string; operation: Operation }[]> {
  const groups = new Map<string, { path: string; method: string; operation: Operation }[]>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? 'Other';
      if (!groups.has(tag)) groups.set(tag, []);
      groups.get(tag)!.push({ path, method, operation });
    }
  }
  return groups;
}

/** The whole page, for the document as /api/docs/json serves it; `stylesheet` is the URL of REFERENCE_CSS. */
export function renderReferencePage(document: Document, stylesheet: string): string {
  const groups = byTag(document);
  const opId = (path: string, method: string, operation: Operation) => anchor('op', operation.operationId ?? `${method}-${path}`);
  const contents = [...groups]
    .map(
      ([tag, operations]) =>
        `<li><a href="#${anchor('tag', tag)}">${escapeHtml(tag)}</a><ul>${operations
          .map(
            ({ path, method, operation }) =>
              `<li><a href="#${opId(path, method, operation)}"><span class="method">${method.toUpperCase()}</span> ${escapeHtml(path)}</a></li>`,
          )
          .join('')}</ul></li>`,
    )
    .join('');
  const sections = [...groups]
    .map(
      ([tag, operations]) =>
        `<section aria-labelledby="${anchor('tag', tag)}"><h2 id="${anchor('tag', tag)}">${escapeHtml(tag)}</h2>` +
        operations.map(({ path, method, operation }) => renderOperation(document, path, method, operation)).join('') +
        '</section>',
    )
    .join('');
  const schemas = Object.entries(document.components?.schemas ?? {})
    .map(
      ([name, schema]) =>
        `<section id="${anchor('schema', name)}" aria-labelledby="${anchor('schema', name)}-title">` +
        `<h3 id="${anchor('schema', name)}-title">${escapeHtml(name)} <span class="type">${typeOf({ ...schema, $ref: undefined })}</span></h3>` +
        `${renderSchema(schema)}</section>`,
    )
    .join('');
  const { info } = document;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(info.title)}: reference</title>
<link rel="stylesheet" href="${escapeHtml(stylesheet)}">
</head>
<body>
<a class="skip" href="#operations">Skip to the operations</a>
<header>
<h1>${escapeHtml(info.title)} <span class="version">${escapeHtml(info.version)}</span></h1>
${info.description ? `<p>${escapeHtml(info.description)}</p>` : ''}
<p>Base URL: <code>${escapeHtml(document.servers?.[0]?.url ?? '/')}</code>. The OpenAPI document: <a href="/api/docs/json">/api/docs/json</a> (for clients and tools that send requests).</p>
</header>
<nav aria-label="Operations by area"><h2>Contents</h2><ul>${contents}<li><a href="#schemas">Schemas</a></li></ul></nav>
<main id="operations">
${sections}
<section aria-labelledby="schemas"><h2 id="schemas">Schemas</h2>${schemas}</section>
</main>
</body>
</html>
`;
}

/** The page's only style sheet: readable type, strong contrast in light and dark schemes, nothing hidden. */
export const REFERENCE_CSS = `
:root { color-scheme: light dark; --fg: #1a1a1a; --bg: #ffffff; --muted: #4a4a4a; --line: #c8c8c8; --accent: #0b4f9c; --code-bg: #f2f2f2; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #ececec; --bg: #141414; --muted: #c4c4c4; --line: #555555; --accent: #8ec5ff; --code-bg: #242424; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 1rem; font: 1rem/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, .scroll:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
code, pre { font-family: ui-monospace, monospace; background: var(--code-bg); border-radius: 3px; }
code { padding: 0 0.2em; overflow-wrap: anywhere; }
pre { padding: 0.5rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: 0.5rem; }
.version { font-size: 1rem; color: var(--muted); font-weight: normal; }
nav ul ul { columns: 2 20rem; }
/* Long paths (/api/webhooks/{id}/deliveries/{deliveryId}/resend) break rather than widen a phone's page. */
nav a, h3 { overflow-wrap: anywhere; }
article { border-top: 1px solid var(--line); padding: 0.5rem 0 1rem; }
.method { display: inline-block; min-width: 4.5em; font-family: ui-monospace, monospace; font-weight: bold; }
.summary { font-weight: 600; }
.auth, .constraints { color: var(--muted); }
.required { font-size: 0.85em; font-weight: 600; }
.status { font-family: ui-monospace, monospace; font-weight: bold; }
.fields, .responses { padding-left: 1.25rem; }
.fields .fields { border-left: 2px solid var(--line); }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
`;
