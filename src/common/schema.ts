import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** Custom schema keyword: the text shown when a value matches none of a union's forms (the validator reads it). */
export const ERROR_TEXT = 'x-error';

/**
 * An optional field of a gateway request that may also be `null`: .NET and
 * Java serializers write an unset property as null, and null means absent.
 * A schema with a `type` gets `nullable: true` (ajv and OpenAPI 3.0 both
 * read it, and the schema's own error texts stay as they are); a union gets
 * a null branch and keeps its one-line error text. Handlers read the body
 * through `absent()`, so they never see the null.
 */
export function OptionalNullable<T extends TSchema>(schema: T) {
  if (typeof schema.type === 'string') return Type.Optional(Type.Unsafe<Static<T> | null>({ ...schema, nullable: true }));
  const branches: unknown[] = Array.isArray(schema.anyOf) ? schema.anyOf : [schema];
  const text: unknown = (schema as Record<string, unknown>)[ERROR_TEXT];
  return Type.Optional(
    Type.Unsafe<Static<T> | null>({
      anyOf: [...branches, Type.Null()],
      ...(typeof text === 'string' ? { [ERROR_TEXT]: text } : {}),
      ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
    }),
  );
}

/** The type of a request body once its null fields are removed: what `absent()` returns. */
export type Absent<T> = T extends readonly (infer U)[] ? Absent<U>[] : T extends object ? { [K in keyof T]: Absent<Exclude<T[K], null>> } : T;

/**
 * Removes every property whose value is null from a (validated) request
 * body, in nested objects and in objects inside arrays too, so that null
 * reads as absent everywhere after. In place: the body is the request's own
 * parse, and a batch may hold 10,000 items.
 */
export function absent<T>(value: T): Absent<T> {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (Array.isArray(item)) {
      for (const v of item) if (v !== null && typeof v === 'object') stack.push(v);
    } else if (item !== null && typeof item === 'object') {
      const record = item as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const v = record[key];
        if (v === null) delete record[key];
        else if (typeof v === 'object') stack.push(v);
      }
    }
  }
  return value as Absent<T>;
}
