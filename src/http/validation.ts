import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/** Custom schema keyword: the text shown when a value matches none of a union's forms. */
export const ERROR_TEXT = 'x-error';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, coerceTypes: coerce, useDefaults: true, removeAdditional: false, strict: false });
  ajv.addKeyword(ERROR_TEXT);
  addFormats(ajv);
  return ajv;
}

// Bodies are JSON: their types are the client's, never coerced ("5" is not 5
// unless a schema says so). Query strings and params are text: coerced.
const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const validate = (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);
  const check = Object.assign(
    (data: unknown, context?: Parameters<typeof validate>[1]) => {
      const valid = validate(data, context);
      const nul = nulErrors(data);
      check.errors = valid && nul.length === 0 ? null : [...(validate.errors ?? []), ...nul];
      return check.errors === null;
    },
    // Fastify hands ajv the parent object (so root values can be coerced) only when it sees schemaEnv.
    { errors: null as ErrorObject[] | null, schemaEnv: validate.schemaEnv },
  );
  return check as ReturnType<FastifySchemaCompiler<unknown>>;
};

/**
 * PostgreSQL text cannot hold U+0000: a NUL anywhere in what a client sends
 * would fail the insert (and with it a whole group commit) as a 500. It is
 * refused here as a 400 on every database. Iterative: bodies may nest deeply.
 */
function nulErrors(data: unknown): ErrorObject[] {
  // Almost never there: look without making paths first.
  if (!hasNul(data)) return [];
  const errors: ErrorObject[] = [];
  const stack: [unknown, string][] = [[data, '']];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [value, path] = item;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) errors.push({ instancePath: path, schemaPath: '#', keyword: 'nul', params: {}, message: 'must not contain the NUL character (\\u0000)' });
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) stack.push([v, `${path}/${k}`]);
    }
  }
  return errors.reverse();
}

function hasNul(data: unknown): boolean {
  const stack: unknown[] = [data];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return true;
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
    .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`))
    .join('')
    .replace(/^\./, '');
  return name || part;
}

/**
 * Turns ajv errors into one readable line per problem. Errors inside a union
 * (anyOf) are folded into the union's own text.
 */
export function describeValidation(errors: ErrorObject[], part: string): string[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath);
  const lines = new Set<string>();
  for (const e of errors) {
    if (e.keyword !== 'anyOf' && unions.some((u) => e.instancePath === u || e.instancePath.startsWith(`${u}/`))) continue;
    const field = fieldName(e.instancePath, part);
    if (e.keyword === 'required') {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      lines.add(`${field === part ? missing : `${field}.${missing}`}: is required`);
    } else if (e.keyword === 'anyOf') {
      const text = (e.parentSchema as Record<string, unknown> | undefined)?.[ERROR_TEXT];
      lines.add(`${field}: ${typeof text === 'string' ? text : 'has an invalid form'}`);
    } else if (e.keyword === 'enum') {
      lines.add(`${field}: must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues).map((v) => JSON.stringify(v)).join(', ')}`);
    } else {
      lines.add(`${field}: ${e.message ?? 'is invalid'}`);
    }
  }
  return [...lines];
}
