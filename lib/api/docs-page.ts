// A readable reference page rendered from the same OpenAPI document (no client-side script needed).
import { openApiDocument } from './openapi.ts';
import { PROBLEM_TYPES } from './problem.ts';

const esc = (s: unknown) =>
  String(s ?? '').replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document walked generically
type Json = Record<string, any>;

function schemaBlock(schema: Json | undefined, components: Json): string {
  if (!schema) return '';
  const name = typeof schema.$ref === 'string' ? schema.$ref.split('/').pop() : undefined;
  const resolved = name ? components[name] : schema;
  return `<details><summary><code>${esc(name ?? 'schema')}</code></summary><pre>${esc(JSON.stringify(resolved, null, 2))}</pre></details>`;
}

export function docsHtml(): string {
  const doc = openApiDocument() as Json;
  const components = doc.components.schemas as Json;
  const ops: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(methods as Json)) {
      const o = op as Json;
      const params = (o.parameters ?? [])
        .map(
          (p: Json) =>
            `<li><code>${esc(p.name)}</code> (${esc(p.in)}${p.required ? ', required' : ''}) ${esc(p.description ?? '')}</li>`,
        )
        .join('');
      const body = o.requestBody
        ? `<h4>Request body</h4>${schemaBlock(o.requestBody.content['application/json'].schema, components)}`
        : '';
      const responses = Object.entries(o.responses as Json)
        .map(
          ([status, r]) =>
            `<li><strong>${esc(status)}</strong> ${esc((r as Json).description)} ${schemaBlock(((r as Json).content?.['application/json'] ?? (r as Json).content?.['application/problem+json'])?.schema, components)}</li>`,
        )
        .join('');
      ops.push(`<section id="${esc(o.operationId)}"><h3><span class="m">${esc(method.toUpperCase())}</span> <code>/api/v1${esc(path)}</code></h3>
<p><strong>${esc(o.summary)}.</strong> ${esc(o.description)}</p>${params ? `<h4>Parameters</h4><ul>${params}</ul>` : ''}${body}<h4>Responses</h4><ul>${responses}</ul></section>`);
    }
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
section{border-top:1px solid #ddd;padding:.5rem 0}.m{background:#1f4f8f;color:#fff;padding:0 .4rem;border-radius:3px;font-size:.8em}
pre{background:#f5f5f5;padding:.5rem;overflow:auto;font-size:12px}code{font-size:.95em}</style></head><body>
<h1>${esc(doc.info.title)} <small>v${esc(doc.info.version)}</small></h1><p>${esc(doc.info.description)}</p>
<p>Machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI ${esc(doc.openapi)}). SDK guide: docs/SDK.md.</p>
<nav><ul>${Object.entries(doc.paths as Json)
    .flatMap(([p, m]) =>
      Object.entries(m as Json).map(
        ([meth, o]) => `<li><a href="#${esc((o as Json).operationId)}">${esc(meth.toUpperCase())} ${esc(p)}</a></li>`,
      ),
    )
    .join('')}</ul></nav>
${ops.join('\n')}
<section id="problems"><h2>Problem types</h2><p>Every error answer is an RFC 9457 problem document
(<code>application/problem+json</code>); its <code>type</code> points at one of these.</p><dl>${Object.entries(
    PROBLEM_TYPES,
  )
    .map(
      ([code, p]) =>
        `<dt id="problem-${esc(code)}"><code>${esc(code)}</code>: ${esc(p.status)} ${esc(p.title)}</dt><dd>${esc(p.when)}</dd>`,
    )
    .join('')}</dl></section></body></html>`;
}
