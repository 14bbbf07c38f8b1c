import type { FastifySchemaCompiler } from 'fastify';
import { ajvPair, boundedValidator, textErrors } from '../validation.ts';

/**
 * Case-insensitive binding (docs/legacy.md): official
 * client libraries send `Content`, others `content`; some send
 * `request_unique_id`. Keys are compared without case, `_`, `-` or spaces
 * and renamed to the schema's spelling before validation, so handlers and
 * the OpenAPI document only know the canonical PascalCase names.
 */
const fold = (key: string) => key.toLowerCase().replace(/[_\-\s]/g, '');

const cache = new WeakMap<object, Map<string, string>>();

/** Property names of an object schema, including each branch of a union (`anyOf`). */
function collect(schema: unknown, names: Map<string, string>): void {
  if (typeof schema !== 'object' || schema === null) return;
  if ('properties' in schema && typeof schema.properties === 'object' && schema.properties !== null) {
    for (const name of Object.keys(schema.properties)) names.set(fold(name), name);
  }
  if ('anyOf' in schema && Array.isArray(schema.anyOf)) for (const branch of schema.anyOf) collect(branch, names);
}

function canonicalNames(schema: object): Map<string, string> {
  let names = cache.get(schema);
  if (!names) {
    names = new Map();
    collect(schema, names);
    cache.set(schema, names);
  }
  return names;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Returns `value` with its keys in the schema's spelling. When a client sends
 * both spellings of a key, the exact one wins. Unknown keys are kept.
 */
export function bindKeys(value: unknown, schema: unknown): unknown {
  if (!isPlainObject(value) || typeof schema !== 'object' || schema === null) return value;
  const names = canonicalNames(schema);
  if (names.size === 0) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
    const canonical = names.get(fold(key)) ?? key;
    if (canonical !== key && Object.hasOwn(value, canonical)) continue;
    out[canonical] = v;
  }
  return out;
}

/**
 * Legacy clients are loose with JSON types (`"ExpireInMinutes": "10"`,
 * `"Receivers": 11999998888`): every part, the body included, is coerced to
 * the schema's types, unlike on the gateway. Same linear, bounded validation
 * as the other interfaces (see boundedValidator), and the same refusal of
 * a NUL or a lone surrogate in any text (src/common/text.ts).
 */
const ajv = ajvPair({ coerceTypes: true });

export const legacyValidatorCompiler: FastifySchemaCompiler<unknown> = ({ schema }) =>
  boundedValidator(ajv, schema as object, textErrors) as ReturnType<FastifySchemaCompiler<unknown>>;
