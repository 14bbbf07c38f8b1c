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

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;

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
