import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/** Custom schema keyword: the text shown when a value matches none of a union's forms. */
import { ERROR_TEXT } from '../common/schema.ts';
import { unstorable } from '../common/text.ts';
export { ERROR_TEXT };

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Two ajv instances with the same options: one stops at the first problem
 * (every request goes through it), the other lists every problem (only for
 * a value already found invalid, and only once its arrays are known to be at
 * most twice their `maxItems`).
 */
export interface AjvPair {
  first: Ajv;
  all: Ajv;
}

export function ajvPair(options: { coerceTypes: boolean }): AjvPair {
  const make = (allErrors: boolean) => {
    const ajv = new Ajv({ allErrors, verbose: true, coerceTypes: options.coerceTypes, useDefaults: true, removeAdditional: false, strict: false });
    ajv.addKeyword(ERROR_TEXT);
    addFormats(ajv);
    return ajv;
  };
  return { first: make(false), all: make(true) };
}

/** What Fastify passes (see schemaEnv below): the value's parent, so ajv can replace a coerced root value. */
type DataValidationCxt = NonNullable<Parameters<ValidateFunction>[1]>;
type Check = ((data: unknown, context?: DataValidationCxt) => boolean) & { errors: ErrorObject[] | null; schemaEnv: unknown };

/**
 * A validator whose cost is linear in the data and whose error list is
 * bounded by the schema's array caps, whatever the client sends:
 * - a valid value is checked once, by the first-problem validator;
 * - an invalid one is first searched for arrays (objects) far over their
 *   `maxItems` (`maxProperties`): when there are any, those are the answer,
 *   and their items are never looked at (a 10 MB array of bad items would
 *   otherwise make one error object per item);
 * - otherwise the listing validator reports every problem.
 * `extra` adds checks of its own (run on every value).
 */
export function boundedValidator(pair: AjvPair, schema: object, extra: (data: unknown) => ErrorObject[] = () => []): Check {
  const first = pair.first.compile(schema);
  let all: ValidateFunction | undefined;
  const check: Check = Object.assign(
    (input: unknown, context?: DataValidationCxt) => {
      let errors: ErrorObject[] = [];
      const valid = first(input, context);
      // Ajv may have replaced a coerced root value in its parent: what is there now is the value.
      const data = context ? (context.parentData as Record<string | number, unknown>)[context.parentDataProperty] : input;
      if (!valid) {
        errors = oversized(schema, data, '') ?? [];
        if (errors.length === 0) {
          all ??= pair.all.compile(schema);
          errors = all(data, context) ? [...(first.errors ?? [])] : [...(all.errors ?? [])];
        }
      }
      const more = extra(data);
      check.errors = errors.length + more.length === 0 ? null : [...errors, ...more];
      return check.errors === null;
    },
    // Fastify hands ajv the parent object (so root values can be coerced) only when it sees schemaEnv.
    { errors: null as ErrorObject[] | null, schemaEnv: first.schemaEnv },
  );
  return check;
}

type SchemaNode = Record<string, unknown>;
const isNode = (v: unknown): v is SchemaNode => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON type of a value as a schema's `type` names it. */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Whether a schema's `type` (if any) admits the value: only then does ajv look inside it. */
function admits(schema: SchemaNode, value: unknown): boolean {
  const type = schema.type;
  if (type === undefined) return true;
  const t = jsonType(value);
  return (Array.isArray(type) ? type : [type]).some((x) => x === t || (x === 'number' && t === 'integer'));
}

const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

function sizeError(instancePath: string, keyword: 'maxItems' | 'maxProperties', limit: number, schema: SchemaNode, data: unknown): ErrorObject {
  const what = keyword === 'maxItems' ? 'items' : 'properties';
  return {
    instancePath,
    schemaPath: `#/${keyword}`,
    keyword,
    params: { limit },
    message: `must NOT have more than ${limit} ${what}`,
    schema: limit,
    parentSchema: schema,
    data,
  };
}

/**
 * How far over its cap an array (object) must be to be reported alone: one
 * a little over it is listed with every other problem, at a cost still
 * bounded by the caps.
 */
const FAR_OVER = 2;

/**
 * The arrays (and objects) of a value with more than FAR_OVER times their
 * schema's `maxItems` (`maxProperties`), or null. Walks the value along the schema (properties,
 * items, additionalProperties, allOf, and the union branches whose type
 * admits the value; a union is over its caps only when every such branch
 * is); never descends into an array or object that is too large, so the
 * cost is bounded by the part of the value the caps allow.
 */
function oversized(schema: unknown, data: unknown, path: string): ErrorObject[] | null {
  if (!isNode(schema) || typeof data !== 'object' || data === null || !admits(schema, data)) return null;
  const out: ErrorObject[] = [];
  const add = (found: ErrorObject[] | null) => {
    if (found) out.push(...found);
  };
  if (Array.isArray(data)) {
    if (typeof schema.maxItems === 'number' && data.length > FAR_OVER * schema.maxItems) return [sizeError(path, 'maxItems', schema.maxItems, schema, data)];
    const { items, prefixItems } = schema;
    const tuple = Array.isArray(prefixItems) ? prefixItems : Array.isArray(items) ? items : null;
    if (tuple) {
      for (let i = 0; i < tuple.length && i < data.length; i++) add(oversized(tuple[i], data[i], `${path}/${i}`));
    } else if (isNode(items)) {
      for (let i = 0; i < data.length; i++) add(oversized(items, data[i], `${path}/${i}`));
    }
  } else {
    const record = data as Record<string, unknown>;
    if (typeof schema.maxProperties === 'number') {
      let count = 0;
      for (const key in record)
        if (Object.hasOwn(record, key) && ++count > FAR_OVER * schema.maxProperties)
          return [sizeError(path, 'maxProperties', schema.maxProperties, schema, data)];
    }
    const properties = isNode(schema.properties) ? schema.properties : null;
    const rest = isNode(schema.additionalProperties) ? schema.additionalProperties : null;
    if (rest) {
      for (const key of Object.keys(record))
        add(oversized(properties && Object.hasOwn(properties, key) ? properties[key] : rest, record[key], `${path}/${pointer(key)}`));
    } else if (properties) {
      for (const key of Object.keys(properties)) if (Object.hasOwn(record, key)) add(oversized(properties[key], record[key], `${path}/${pointer(key)}`));
    }
  }
  if (Array.isArray(schema.allOf)) for (const part of schema.allOf) add(oversized(part, data, path));
  for (const union of [schema.anyOf, schema.oneOf]) {
    if (!Array.isArray(union)) continue;
    let found: ErrorObject[] | null = null;
    let fits = false;
    for (const branch of union) {
      if (!isNode(branch) || !admits(branch, data)) continue;
      const e = oversized(branch, data, path);
      if (!e) {
        fits = true;
        break;
      }
      found ??= e;
    }
    if (!fits) add(found);
  }
  return out.length > 0 ? out : null;
}

// Bodies are JSON: their types are the client's, never coerced ("5" is not 5
// unless a schema says so). Query strings and params are text: coerced.
const bodyAjv = ajvPair({ coerceTypes: false });
const textAjv = ajvPair({ coerceTypes: true });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  boundedValidator(httpPart === 'body' ? bodyAjv : textAjv, schema as object, textErrors) as ReturnType<FastifySchemaCompiler<unknown>>;

/**
 * The error Fastify raises for a value its schema refuses. Every interface's
 * error handler writes its own text from the error list Fastify attaches
 * (`validation`), so this one carries a short message and no stack: a stack
 * captured through Fastify's hooks was a tenth of the CPU of a refused request.
 */
export function schemaErrorFormatter(_errors: unknown, dataVar: string): Error {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new Error(`${dataVar} does not match its schema`);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * A NUL or a lone surrogate in any text is refused as a 400 on every
 * database (src/common/text.ts says why). Iterative: bodies may nest deeply.
 */
export function textErrors(data: unknown): ErrorObject[] {
  // Almost never there: look without making paths first.
  if (!hasUnstorable(data)) return [];
  const errors: ErrorObject[] = [];
  const stack: [unknown, string][] = [[data, '']];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [value, path] = item;
    if (typeof value === 'string') {
      const why = unstorable(value);
      if (why) errors.push({ instancePath: path, schemaPath: '#', keyword: why, params: {}, message: UNSTORABLE[why] });
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) stack.push([v, `${path}/${k}`]);
    }
  }
  return errors.reverse();
}

const UNSTORABLE = {
  nul: 'must not contain the NUL character (\\u0000)',
  surrogate: 'must be Unicode text: it holds half of a surrogate pair (\\ud800-\\udfff) without the other half',
};

function hasUnstorable(data: unknown): boolean {
  const stack: unknown[] = [data];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (unstorable(value)) return true;
    } else if (value !== null && typeof value === 'object') {
      for (const v of Object.values(value)) stack.push(v);
    }
  }
  return false;
}

/** `/receivers/0` -> `receivers[0]`. */
function fieldName(path: string, part: string): string {
  const name = path
    .split('/')
    .slice(1)
    .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('')
    .replace(/^\./, '');
  return name || part;
}

/** Lines shown at most; the rest are counted in one last line. */
export const MAX_PROBLEM_LINES = 20;

/** True when `path` is `union` or lies below it, for any path in `unions`: one lookup per level of `path`. */
function underUnion(path: string, unions: ReadonlySet<string>): boolean {
  for (let p = path; ; ) {
    if (unions.has(p)) return true;
    const cut = p.lastIndexOf('/');
    if (cut < 0) return false;
    p = p.slice(0, cut);
  }
}

/**
 * Turns ajv errors into one readable line per problem. Errors inside a union
 * (anyOf) are folded into the union's own text. Linear in the errors; at
 * most `maxLines` lines, then "... and N more problems".
 */
export function describeValidation(errors: ErrorObject[], part: string, maxLines = MAX_PROBLEM_LINES): string[] {
  const unions = new Set<string>();
  for (const e of errors) if (e.keyword === 'anyOf') unions.add(e.instancePath);
  const lines = new Set<string>();
  for (const e of errors) {
    if (e.keyword !== 'anyOf' && unions.size > 0 && underUnion(e.instancePath, unions)) continue;
    const field = fieldName(e.instancePath, part);
    if (e.keyword === 'required') {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      lines.add(`${field === part ? missing : `${field}.${missing}`}: is required`);
    } else if (e.keyword === 'anyOf') {
      const text = (e.parentSchema as Record<string, unknown> | undefined)?.[ERROR_TEXT];
      lines.add(`${field}: ${typeof text === 'string' ? text : 'has an invalid form'}`);
    } else if (e.keyword === 'enum') {
      lines.add(`${field}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`);
    } else {
      lines.add(`${field}: ${e.message ?? 'is invalid'}`);
    }
  }
  const all = [...lines];
  if (all.length <= maxLines) return all;
  const more = all.length - maxLines;
  return [...all.slice(0, maxLines), `... and ${more} more problem${more === 1 ? '' : 's'}`];
}
